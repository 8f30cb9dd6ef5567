"""Tool calling through the official openai client on the models LPX runs. The default model
(SmolLM2-135M) and Gemma 3 have chat templates that know no tools: the tools are described in a
system message and calls are written in the Hermes <tool_call> form under a grammar, so that
`tool_choice: "required"` or a named function answers with `tool_calls` whose arguments validate
against the function's schema. Also: streaming deltas and the client's stream helper, the
client's `parse` helper with pydantic tools, a conversation that carries the calls and their
results back, and the 400s (docs/structured-output.md).
"""
import json

import jsonschema
import openai
import pydantic
import pytest

from conftest import ROOT, expect_400, start_server

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "maxLength": 30},
                   "unit": {"enum": ["celsius", "fahrenheit"]}},
    "required": ["city", "unit"], "additionalProperties": False}
TIME = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 30}},
        "required": ["city"], "additionalProperties": False}
SCHEMAS = {"get_weather": WEATHER, "get_time": TIME}
TOOLS = [
    {"type": "function", "function": {"name": "get_weather", "description": "The weather in a city now",
                                      "parameters": WEATHER}},
    {"type": "function", "function": {"name": "get_time", "description": "The local time in a city",
                                      "parameters": TIME}},
]
QUESTION = [{"role": "user", "content": "What is the weather in Paris?"}]


def client_of(srv):
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", timeout=120).with_options(max_retries=0)


@pytest.fixture(scope="module")
def client():
    srv = start_server("--max-sequences", "4")
    yield client_of(srv)
    assert srv.stop() == 0, srv.log()


def call(client, **kw):
    args = dict(model="m", messages=QUESTION, tools=TOOLS, max_tokens=120, temperature=0)
    args.update(kw)
    return client.chat.completions.create(**args)


def check_calls(message):
    """Every call names an offered function, has a unique id and schema-valid arguments."""
    assert message.tool_calls, message
    ids = [c.id for c in message.tool_calls]
    assert len(set(ids)) == len(ids) and all(i.startswith("call_") for i in ids)
    for c in message.tool_calls:
        assert c.type == "function"
        jsonschema.validate(json.loads(c.function.arguments), SCHEMAS[c.function.name])


def test_required_answers_with_valid_calls(client):
    chat = call(client, tool_choice="required", parallel_tool_calls=False)
    choice = chat.choices[0]
    assert choice.finish_reason == "tool_calls", choice.message
    assert choice.message.content is None
    assert len(choice.message.tool_calls) == 1
    check_calls(choice.message)


def test_a_named_function_is_the_one_called(client):
    chat = call(client, tool_choice={"type": "function", "function": {"name": "get_time"}})
    choice = chat.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert [c.function.name for c in choice.message.tool_calls] == ["get_time"]
    check_calls(choice.message)


def test_parallel_calls_that_run_out_of_tokens_keep_the_whole_ones(client):
    # Greedy SmolLM2 repeats calls when it may make several: max_tokens cuts the last one.
    chat = call(client, tool_choice="required", max_tokens=90)
    choice = chat.choices[0]
    check_calls(choice.message)
    if choice.finish_reason == "length":
        assert "<tool_call>" in (choice.message.content or ""), "the cut call stays as text"
    else:
        assert choice.finish_reason == "tool_calls"


def test_streamed_calls_arrive_as_openai_deltas(client):
    whole = call(client, tool_choice="required", parallel_tool_calls=False)
    chunks = list(call(client, tool_choice="required", parallel_tool_calls=False, stream=True))
    deltas = [d for c in chunks for d in (c.choices[0].delta.tool_calls or [])]
    assert deltas and deltas[0].index == 0 and deltas[0].id.startswith("call_")
    assert deltas[0].function.name == whole.choices[0].message.tool_calls[0].function.name
    arguments = "".join(d.function.arguments or "" for d in deltas)
    assert arguments == whole.choices[0].message.tool_calls[0].function.arguments
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert not any(c.choices[0].delta.content for c in chunks), "no call text leaks into content"


class GetWeather(pydantic.BaseModel):
    city: str = pydantic.Field(max_length=30)
    unit: str


def test_the_clients_parse_and_stream_helpers_read_the_calls(client):
    tools = [openai.pydantic_function_tool(GetWeather)]
    # One call each: greedy SmolLM2 repeats a call when it may make several (the test above).
    one = dict(model="m", messages=QUESTION, tools=tools, tool_choice="required", parallel_tool_calls=False,
               max_tokens=120, temperature=0)
    parsed = client.beta.chat.completions.parse(**one)
    calls = parsed.choices[0].message.tool_calls
    assert isinstance(calls[0].function.parsed_arguments, GetWeather)
    with client.beta.chat.completions.stream(**one) as stream:
        done = [e for e in stream if e.type == "tool_calls.function.arguments.done"]
        final = stream.get_final_completion()
    assert done and isinstance(done[0].parsed_arguments, GetWeather)
    assert final.choices[0].message.tool_calls[0].function.parsed_arguments == calls[0].function.parsed_arguments
    # Both messages go back into a conversation as the helpers left them (with `parsed`, and a
    # streamed call's `index`).
    for message in (parsed.choices[0].message, final.choices[0].message):
        result = {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "21 C"}
        answer = client.chat.completions.create(model="m", messages=QUESTION + [message, result], max_tokens=8,
                                                temperature=0, tools=tools, tool_choice="none")
        assert answer.choices[0].message.content


def test_calls_and_results_go_back_into_the_conversation(client):
    first = call(client, tool_choice="required", parallel_tool_calls=False)
    message = first.choices[0].message
    messages = QUESTION + [message, {"role": "tool", "tool_call_id": message.tool_calls[0].id,
                                     "content": '{"temperature": 21, "sky": "clear"}'}]
    answer = call(client, messages=messages, tool_choice="none", max_tokens=40)
    assert answer.choices[0].message.tool_calls is None
    assert answer.choices[0].message.content
    # The call and its result reached the prompt (tool_choice none offers no tools).
    plain = call(client, tools=None, max_tokens=1)
    assert answer.usage.prompt_tokens > plain.usage.prompt_tokens + 30


def test_optional_calls_with_a_strict_function_stay_valid(client):
    strict = [{"type": "function", "function": dict(t["function"], strict=True)} for t in TOOLS]
    for seed in range(3):
        chat = call(client, tools=strict, tool_choice="auto", temperature=0.8, seed=seed)
        choice = chat.choices[0]
        if choice.message.tool_calls:
            check_calls(choice.message)
            assert choice.finish_reason in ("tool_calls", "length")
        else:
            assert choice.message.content and choice.finish_reason in ("stop", "length")


def test_auto_with_a_response_format_answers_either_valid_json_or_calls(client):
    schema = {"type": "object", "properties": {"answer": {"type": "string", "maxLength": 40}},
              "required": ["answer"], "additionalProperties": False}
    chat = call(client, tool_choice="auto",
                response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": schema}})
    choice = chat.choices[0]
    if choice.message.tool_calls:
        check_calls(choice.message)
    else:
        assert choice.finish_reason == "stop"
        jsonschema.validate(json.loads(choice.message.content), schema)


def test_what_cannot_be_honoured_is_a_400_naming_it(client):
    unique = [{"type": "function", "function": {"name": "tag", "parameters": {
        "type": "object", "properties": {"tags": {"type": "array", "uniqueItems": True}}}}}]
    assert "uniqueItems" in expect_400(lambda: call(client, tools=unique, tool_choice="required"), "tools")
    expect_400(lambda: call(client, tool_choice={"type": "function", "function": {"name": "nope"}}), "tool_choice")
    expect_400(lambda: call(client, tools=[{"type": "retrieval"}]), "tools")
    expect_400(lambda: call(client, tools=None, tool_choice="required"), "tool_choice")
    expect_400(lambda: client.completions.create(model="m", prompt="a", max_tokens=4, extra_body={"tools": TOOLS}),
               "tools")
    expect_400(lambda: call(client, tools=None, functions=[{"name": "f"}]), "functions")


def test_gemma_calls_tools_through_its_builtin_template():
    gemma3 = ROOT / "models/gemma-3-270m-q4_k_m.gguf"
    if not gemma3.exists():
        pytest.skip(f"{gemma3} is missing (tools/setup.sh fetches it)")
    srv = start_server("--max-sequences", "1", model=str(gemma3))
    try:
        chat = call(client_of(srv), tool_choice="required", parallel_tool_calls=False)
        assert chat.choices[0].finish_reason == "tool_calls"
        check_calls(chat.choices[0].message)
    finally:
        assert srv.stop() == 0, srv.log()
