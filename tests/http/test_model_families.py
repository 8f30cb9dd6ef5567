"""The server on another model family: the real Gemma 3 270M (tools/setup.sh fetches it), whose
file has no chat template, so chat runs on LPX's built-in Gemma 3 template. A chat request must
become exactly the prompt llama.cpp tokenized for the same turn (the peer fixture's ids) and
answer as that prompt does; streamed and whole answers agree, and two requests decoding together
answer as one alone does.
"""
import concurrent.futures
import json

import openai
import pytest

from conftest import ROOT, start_server

GEMMA3 = ROOT / "models/gemma-3-270m-q4_k_m.gguf"
QUESTION = "What is the capital of France?"


@pytest.fixture(scope="module")
def gemma():
    if not GEMMA3.exists():
        pytest.skip(f"{GEMMA3} is missing (tools/setup.sh fetches it)")
    s = start_server("--max-sequences", "2", model=str(GEMMA3))
    yield s
    assert s.stop() == 0, s.log()


def client_of(srv):
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused",
                         timeout=120).with_options(max_retries=0)


def test_chat_uses_the_builtin_template(gemma):
    client = client_of(gemma)
    chat = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": QUESTION}], max_tokens=12, temperature=0)
    assert chat.choices[0].finish_reason == "length"
    assert chat.usage.completion_tokens == 12
    # llama.cpp's ids for this turn in Gemma's markup, BOS first (tests/fixtures/greedy).
    fixture = json.loads((ROOT / "tests/fixtures/greedy/gemma3-270m-q4_k_m.json").read_text())
    turn = next(p for p in fixture["prompts"] if p["name"] == "chat_capital")
    assert QUESTION in turn["prompt"]
    raw = client.completions.create(model="m", prompt=turn["prompt_ids"], max_tokens=12,
                                    temperature=0)
    assert chat.usage.prompt_tokens == len(turn["prompt_ids"])
    assert chat.choices[0].message.content == raw.choices[0].text
    assert "uses LPX's built-in Gemma 3 template" in gemma.log()


def test_streamed_equals_whole_and_batching_changes_nothing(gemma):
    client = client_of(gemma)
    request = dict(model="m", prompt="The three primary colours are", max_tokens=16, temperature=0)
    whole = client.completions.create(**request).choices[0].text
    streamed = "".join(c.choices[0].text for c in client.completions.create(stream=True, **request)
                       if c.choices)
    assert streamed == whole
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        both = list(pool.map(lambda _: client.completions.create(**request).choices[0].text, range(2)))
    assert both == [whole, whole]
