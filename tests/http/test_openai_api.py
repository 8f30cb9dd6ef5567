"""The OpenAI-compatible endpoints (docs/http-server.md), driven by the official `openai` client.

Everything runs against one `lpx-pipeline serve` on SmolLM2-135M-Instruct (the `server` fixture);
the chat-template error uses the tiny Llama (`tiny_server`), the prompt-too-long checks a server
of their own with `--context 256`.
"""
import json
import pathlib
import urllib.error
import urllib.request

import openai
import pytest

from conftest import MODEL, start_server

CAPITAL_PROMPT = "The capital of France is"
STORY_PROMPT = "Once upon a time"
CAPITAL_CHAT = [{"role": "user", "content": "What is the capital of France?"}]


def make_client(srv):
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused",
                         timeout=120).with_options(max_retries=0)


@pytest.fixture(scope="module")
def client(server):
    return make_client(server)


@pytest.fixture(scope="module")
def small_context_server():
    """A server whose context is 256 positions, so a long prompt is easy to build."""
    s = start_server("--context", "256")
    yield s
    assert s.stop() == 0, s.log()


def post_json(srv, path, body):
    req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def get(srv, path):
    try:
        with urllib.request.urlopen(srv.url + path, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def token_ids(srv, text):
    status, body = post_json(srv, "/tokenize", {"text": text, "add_special": False})
    assert status == 200, body
    return body["tokens"]


def greedy_completion(client, prompt=CAPITAL_PROMPT, max_tokens=8, **kw):
    return client.completions.create(model="any", prompt=prompt, max_tokens=max_tokens,
                                     temperature=0, **kw)


def greedy_chat(client, messages=CAPITAL_CHAT, max_tokens=16, **kw):
    return client.chat.completions.create(model="any", messages=messages, max_tokens=max_tokens,
                                          temperature=0, **kw)


def expect_400(call, param=None):
    """Runs `call`, expects openai.BadRequestError with an OpenAI error body; returns the error object."""
    with pytest.raises(openai.BadRequestError) as info:
        call()
    err = info.value
    assert err.status_code == 400
    body = err.response.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert error["type"] == "invalid_request_error", error
    assert isinstance(error["message"], str) and error["message"], error
    assert "code" in error and "param" in error, error
    if param is not None:
        assert error["param"] == param, error
    return error


# --- /v1/models -----------------------------------------------------------------------------

def test_models_list_has_one_model(client):
    models = client.models.list()
    assert len(models.data) == 1, models
    model = models.data[0]
    assert isinstance(model.id, str) and model.id
    assert model.id == pathlib.Path(MODEL).stem  # model_id empty = the model file's stem
    assert model.object == "model"
    assert model.owned_by == "lpx"
    assert isinstance(model.created, int)
    extra = model.model_extra or {}
    assert isinstance(extra.get("context_length"), int) and extra["context_length"] > 0, extra


# --- /v1/completions ------------------------------------------------------------------------

def test_completion_length_and_usage(client, server):
    r = greedy_completion(client, max_tokens=8)
    assert r.object == "text_completion"
    assert len(r.choices) == 1
    choice = r.choices[0]
    assert choice.index == 0
    assert isinstance(choice.text, str) and choice.text
    assert "Paris" in choice.text  # greedy: " Paris.\n\nThe United ..."
    assert choice.finish_reason == "length"
    u = r.usage
    assert u.completion_tokens == 8
    assert u.prompt_tokens > 0
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens
    assert u.prompt_tokens == len(post_json(server, "/tokenize", {"text": CAPITAL_PROMPT})[1]["tokens"])


def test_completion_prompt_as_token_ids_matches_string(client, server):
    text = greedy_completion(client, max_tokens=6).choices[0].text
    ids = token_ids(server, CAPITAL_PROMPT)
    r = greedy_completion(client, prompt=ids, max_tokens=6)
    assert r.choices[0].text == text
    assert r.usage.prompt_tokens == len(ids)


def test_completion_prompts_read_special_tokens_unless_told_not_to(client):
    # As llama-server and vLLM: "<|im_start|>" in a completions prompt is that one token.
    text = "<|im_start|>user\nHi<|im_end|>"
    special = client.completions.create(model="m", prompt=text, max_tokens=1, temperature=0)
    plain = client.completions.create(model="m", prompt=text, max_tokens=1, temperature=0,
                                      extra_body={"parse_special": False})
    assert special.usage.prompt_tokens + 12 <= plain.usage.prompt_tokens, (special.usage, plain.usage)


def test_unknown_fields_are_refused_by_name(client):
    expect_400(lambda: greedy_completion(client, max_tokens=4,
                                         extra_body={"lpx_no_such_field": {"x": [1]}}),
               param="lpx_no_such_field")


def test_prompt_token_outside_vocabulary_is_400(client):
    expect_400(lambda: greedy_completion(client, prompt=[19556, 10**7], max_tokens=4),
               param="prompt")


def test_greedy_is_reproducible(client):
    a = greedy_completion(client, prompt=STORY_PROMPT, max_tokens=12)
    b = greedy_completion(client, prompt=STORY_PROMPT, max_tokens=12)
    assert a.choices[0].text == b.choices[0].text
    assert a.choices[0].text


def sampled(client, seed, max_tokens=12, **kw):
    return client.completions.create(model="any", prompt=STORY_PROMPT, max_tokens=max_tokens,
                                      temperature=0.8, seed=seed, **kw)


def test_seed_reproducible_and_seeds_differ(client):
    a = sampled(client, 1234).choices[0].text
    b = sampled(client, 1234).choices[0].text
    assert a == b
    texts = {sampled(client, seed).choices[0].text for seed in (1, 2, 3, 4)}
    assert len(texts) > 1, texts


def test_n_choices_use_seed_plus_index(client):
    r = sampled(client, 42, max_tokens=8, n=3)
    assert len(r.choices) == 3
    assert sorted(c.index for c in r.choices) == [0, 1, 2]
    by_index = {c.index: c.text for c in r.choices}
    for i in range(3):
        assert by_index[i], r
        # "choice i of n uses seed + i"
        assert by_index[i] == sampled(client, 42 + i, max_tokens=8).choices[0].text, i


def test_completion_stream_matches_non_streamed(client):
    full = greedy_completion(client, max_tokens=10)
    chunks = list(greedy_completion(client, max_tokens=10, stream=True,
                                    stream_options={"include_usage": True}))
    assert len(chunks) >= 2
    for c in chunks:
        assert c.object == "text_completion"
    text = "".join(ch.text for c in chunks for ch in c.choices)
    assert text == full.choices[0].text
    finishes = [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason]
    assert finishes == ["length"]
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.completion_tokens == full.usage.completion_tokens == 10
    assert last.usage.prompt_tokens == full.usage.prompt_tokens
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens


def choose_stop(text):
    """A word of `text` after its first few characters, to use as a stop string."""
    for word in text.split()[1:]:
        word = word.strip(".,;:!?\"'()")
        if len(word) >= 3 and text.index(word) > 0:
            return word
    pytest.fail(f"no usable stop word in {text!r}")


def test_stop_string_truncates(client):
    greedy = greedy_completion(client, max_tokens=16).choices[0].text
    stop = choose_stop(greedy)
    expected = greedy[:greedy.index(stop)]
    r = greedy_completion(client, max_tokens=16, stop=stop)
    assert r.choices[0].text == expected, (greedy, stop)
    assert r.choices[0].finish_reason == "stop"
    r = greedy_completion(client, max_tokens=16, stop=["zq#never-there", stop])
    assert r.choices[0].text == expected
    assert r.choices[0].finish_reason == "stop"


def test_stop_string_streamed(client):
    greedy = greedy_completion(client, max_tokens=16).choices[0].text
    stop = choose_stop(greedy)
    chunks = list(greedy_completion(client, max_tokens=16, stop=stop, stream=True))
    assert "".join(ch.text for c in chunks for ch in c.choices) == greedy[:greedy.index(stop)]
    assert [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason] == ["stop"]


def test_completion_logprobs(client):
    r = greedy_completion(client, max_tokens=6, logprobs=2)
    choice = r.choices[0]
    lp = choice.logprobs
    assert lp is not None
    n = r.usage.completion_tokens
    assert n == 6
    assert len(lp.tokens) == n
    assert len(lp.token_logprobs) == n
    assert len(lp.top_logprobs) == n
    assert "".join(lp.tokens) == choice.text
    for token, logprob, top in zip(lp.tokens, lp.token_logprobs, lp.top_logprobs):
        assert logprob <= 0
        assert 1 <= len(top) <= 2, top
        values = list(top.values())
        assert all(v <= 0 for v in values)
        assert values == sorted(values, reverse=True), top
        # greedy: the chosen token is the most likely one
        assert logprob == pytest.approx(values[0], abs=1e-4)
        assert token in top


def test_completion_logit_bias_bans_first_token(client, server):
    first = greedy_completion(client, max_tokens=1).choices[0].text
    assert first == " Paris"
    ids = token_ids(server, first)
    assert len(ids) == 1, ids
    banned = greedy_completion(client, max_tokens=1, logit_bias={str(ids[0]): -100})
    assert banned.choices[0].text != first
    london = token_ids(server, " London")
    assert len(london) == 1
    forced = greedy_completion(client, max_tokens=1, logit_bias={str(london[0]): 100})
    assert forced.choices[0].text == " London"


# --- /v1/chat/completions -------------------------------------------------------------------

def test_chat_answers_paris(client):
    r = greedy_chat(client, max_tokens=32)
    assert r.object == "chat.completion"
    assert len(r.choices) == 1
    choice = r.choices[0]
    assert choice.index == 0
    assert choice.message.role == "assistant"
    assert isinstance(choice.message.content, str) and choice.message.content
    assert "Paris" in choice.message.content
    assert choice.finish_reason in ("stop", "length")
    u = r.usage
    assert u.prompt_tokens > 0 and u.completion_tokens > 0
    assert u.total_tokens == u.prompt_tokens + u.completion_tokens
    if choice.finish_reason == "length":
        assert u.completion_tokens == 32


def test_chat_max_completion_tokens(client):
    r = client.chat.completions.create(model="any", messages=CAPITAL_CHAT, temperature=0,
                                       max_completion_tokens=3)
    assert r.usage.completion_tokens == 3
    assert r.choices[0].finish_reason == "length"


def test_chat_stream_matches_non_streamed(client):
    full = greedy_chat(client, max_tokens=16)
    chunks = list(greedy_chat(client, max_tokens=16, stream=True,
                              stream_options={"include_usage": True}))
    assert len(chunks) >= 2
    for c in chunks:
        assert c.object == "chat.completion.chunk"
    text = "".join(ch.delta.content or "" for c in chunks for ch in c.choices)
    assert text == full.choices[0].message.content
    finishes = [ch.finish_reason for c in chunks for ch in c.choices if ch.finish_reason]
    assert finishes == [full.choices[0].finish_reason]
    last = chunks[-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.completion_tokens == full.usage.completion_tokens
    assert last.usage.prompt_tokens == full.usage.prompt_tokens
    assert last.usage.total_tokens == last.usage.prompt_tokens + last.usage.completion_tokens
    # without include_usage no usage-only chunk comes
    plain = list(greedy_chat(client, max_tokens=4, stream=True))
    assert all(c.choices for c in plain)


def test_chat_logprobs(client):
    r = greedy_chat(client, max_tokens=6, logprobs=True, top_logprobs=3)
    choice = r.choices[0]
    assert choice.logprobs is not None
    content = choice.logprobs.content
    assert content is not None
    assert len(content) == r.usage.completion_tokens
    assert "".join(t.token for t in content) == choice.message.content
    for t in content:
        assert isinstance(t.token, str)
        assert t.logprob <= 0
        assert len(t.top_logprobs) == 3
        values = [alt.logprob for alt in t.top_logprobs]
        assert values == sorted(values, reverse=True)
        assert all(v <= 0 for v in values)
        # greedy: the chosen token is the top-1 alternative
        assert t.token == t.top_logprobs[0].token
        assert t.logprob == pytest.approx(t.top_logprobs[0].logprob, abs=1e-4)


def test_chat_on_model_without_template_is_400(tiny_server):
    tiny = make_client(tiny_server)
    error = expect_400(lambda: tiny.chat.completions.create(
        model="any", messages=[{"role": "user", "content": "hi"}], max_tokens=4))
    assert "chat template" in error["message"].lower().replace("_", " "), error
    # completions still work on that model
    r = tiny.completions.create(model="any", prompt="hi", max_tokens=2, temperature=0)
    assert r.usage.completion_tokens >= 1


# --- errors ---------------------------------------------------------------------------------

def test_max_tokens_zero_is_400(client):
    expect_400(lambda: greedy_completion(client, max_tokens=0), param="max_tokens")
    expect_400(lambda: greedy_chat(client, max_tokens=0), param="max_tokens")
    expect_400(lambda: client.chat.completions.create(
        model="any", messages=CAPITAL_CHAT, temperature=0, max_completion_tokens=0),
        param="max_completion_tokens")


def test_max_tokens_above_context_is_400(client):
    context = client.models.list().data[0].model_extra["context_length"]
    expect_400(lambda: greedy_completion(client, max_tokens=context + 1), param="max_tokens")


def test_temperature_wrong_type_is_400(client):
    error = expect_400(lambda: client.completions.create(
        model="any", prompt=CAPITAL_PROMPT, max_tokens=4, temperature="hot-XYZZY"),
        param="temperature")
    assert "XYZZY" not in error["message"]  # bytes the client sent are never echoed
    expect_400(lambda: client.completions.create(
        model="any", prompt=CAPITAL_PROMPT, max_tokens=4, temperature=2.5), param="temperature")


def test_n_out_of_range_is_400(client):
    expect_400(lambda: greedy_completion(client, max_tokens=4, n=100), param="n")
    expect_400(lambda: greedy_chat(client, max_tokens=4, n=100), param="n")


def test_logit_bias_unknown_token_is_400(client):
    expect_400(lambda: greedy_completion(client, max_tokens=4, logit_bias={str(10**9): 5}),
               param="logit_bias")


@pytest.mark.parametrize("extra", [{"echo": True}, {"best_of": 2}, {"suffix": "x"}])
def test_unsupported_completion_fields_are_400(client, extra):
    expect_400(lambda: greedy_completion(client, max_tokens=4, **extra))


def test_prompt_longer_than_context_is_400(small_context_server):
    c = make_client(small_context_server)
    assert c.models.list().data[0].model_extra["context_length"] == 256
    long_prompt = "hello " * 400  # ~401 tokens, context 256
    # The engine's refusal keeps its code and field (resource exhausted, the prompt), which the
    # server answers as OpenAI does, without reading the message.
    for _ in range(10):
        error = expect_400(lambda: c.completions.create(model="any", prompt=long_prompt,
                                                        max_tokens=4, temperature=0),
                           param="prompt")
        assert error["code"] == "context_length_exceeded", error
    error = expect_400(lambda: c.completions.create(model="any", prompt=[19556] * 300,
                                                    max_tokens=4, temperature=0), param="prompt")
    assert error["code"] == "context_length_exceeded", error
    error = expect_400(lambda: c.chat.completions.create(
        model="any", messages=[{"role": "user", "content": long_prompt}], max_tokens=4,
        temperature=0), param="messages")
    assert error["code"] == "context_length_exceeded", error
    # A prompt that fits but leaves too little room for max_tokens: the field is max_tokens.
    error = expect_400(lambda: c.completions.create(model="any", prompt=[19556] * 200,
                                                    max_tokens=100, temperature=0),
                       param="max_tokens")
    assert error["code"] == "context_length_exceeded", error
    assert small_context_server.alive(), small_context_server.log()
    status, body = get(small_context_server, "/health")
    assert status == 200 and json.loads(body) == {"status": "ok"}
    # and it still generates
    r = c.completions.create(model="any", prompt=CAPITAL_PROMPT, max_tokens=4, temperature=0)
    assert r.usage.completion_tokens == 4
    assert r.choices[0].finish_reason == "length"
