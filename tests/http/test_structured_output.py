"""Structured output through the official openai client on the default model (SmolLM2-135M):
`response_format` json_schema and json_object, LPX's `grammar` field, the client's
`beta.chat.completions.parse` helper, streaming, and the 400s for what LPX cannot honour. Every
answer must parse and validate with Python's `jsonschema` (docs/structured-output.md).
"""
import json
import pathlib
from typing import List, Optional

import jsonschema
import openai
import pydantic
import pytest

from conftest import expect_400, start_server

SCHEMAS = {
    "person": {
        "type": "object",
        "properties": {"name": {"type": "string", "maxLength": 30},
                       "age": {"type": "integer", "minimum": 0, "maximum": 120}},
        "required": ["name", "age"], "additionalProperties": False},
    "sentiment": {
        "type": "object",
        "properties": {"label": {"enum": ["positive", "negative", "neutral"]},
                       "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
        "required": ["label", "confidence"]},
    "address_book": {
        "type": "object",
        "properties": {"contacts": {"type": "array", "minItems": 1, "maxItems": 3,
                                    "items": {"$ref": "#/$defs/contact"}}},
        "required": ["contacts"],
        "$defs": {"contact": {"type": "object",
                              "properties": {"name": {"type": "string", "maxLength": 20},
                                             "email": {"type": "string", "format": "email"},
                                             "phone": {"type": ["string", "null"], "pattern": "^[0-9-]{7,12}$"}},
                              "required": ["name", "email", "phone"]}}},
    "event": {
        "type": "object",
        "properties": {"title": {"type": "string", "minLength": 3, "maxLength": 40},
                       "date": {"type": "string", "format": "date"},
                       "attendees": {"type": "integer", "minimum": 1, "maximum": 500},
                       "online": {"type": "boolean"}},
        "required": ["title", "date", "attendees", "online"]},
    "order": {
        "type": "object",
        "properties": {"id": {"type": "string", "format": "uuid"},
                       "items": {"type": "array", "maxItems": 3, "items": {
                           "type": "object",
                           "properties": {"sku": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"},
                                          "quantity": {"type": "integer", "minimum": 1, "maximum": 9}},
                           "required": ["sku", "quantity"]}},
                       "status": {"const": "pending"}},
        "required": ["id", "items", "status"]},
    "shape": {
        "anyOf": [
            {"type": "object", "properties": {"kind": {"const": "circle"}, "radius": {"type": "number"}},
             "required": ["kind", "radius"]},
            {"type": "object", "properties": {"kind": {"const": "square"}, "side": {"type": "number"}},
             "required": ["kind", "side"]}]},
    "point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
              "items": False, "minItems": 2},
    "tags": {"type": "array", "items": {"type": "string", "maxLength": 10}, "minItems": 2, "maxItems": 4},
}


# About fifty schemas of the kinds API users send (extraction, classification, forms, records,
# nested objects, references, unions, formats, patterns, root scalars and arrays), each with the
# prompt that asks for it.
CORPUS = json.loads((pathlib.Path(__file__).parent / "data" / "schema_corpus.json").read_text())


@pytest.fixture(scope="module")
def client():
    srv = start_server("--max-sequences", "4")
    yield openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", timeout=120).with_options(max_retries=0)
    assert srv.stop() == 0, srv.log()


def ask(client, schema, name, temperature=0, **kw):
    return client.chat.completions.create(
        model="m", max_tokens=300, temperature=temperature,
        messages=[{"role": "user", "content": f"Give me an example {name} as JSON."}],
        response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}},
        **kw)


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_each_schema_is_answered_with_valid_json(client, name):
    chat = ask(client, SCHEMAS[name], name)
    choice = chat.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    jsonschema.validate(json.loads(choice.message.content), SCHEMAS[name])


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_the_corpus_is_answered_with_valid_json(client, case):
    jsonschema.Draft202012Validator.check_schema(case["schema"])
    # Greedy with a light repetition penalty: plain greedy decoding of a 135M model can loop
    # inside a value the schema leaves unbounded (a time's fraction of a second, a duration's
    # digits) until max_tokens, an honest "length" but no test of the schema.
    chat = client.chat.completions.create(
        model="m", max_tokens=300, temperature=0, extra_body={"repetition_penalty": 1.1},
        messages=[{"role": "user", "content": case["prompt"] + " Answer in JSON."}],
        response_format={"type": "json_schema",
                         "json_schema": {"name": case["name"], "schema": case["schema"]}})
    choice = chat.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    jsonschema.Draft202012Validator(case["schema"], format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER).validate(
        json.loads(choice.message.content))


def test_streamed_answer_is_the_same_valid_json(client):
    whole = ask(client, SCHEMAS["event"], "event").choices[0].message.content
    streamed = "".join(c.choices[0].delta.content or "" for c in ask(client, SCHEMAS["event"], "event", stream=True)
                       if c.choices)
    assert streamed == whole
    jsonschema.validate(json.loads(streamed), SCHEMAS["event"])


def test_json_object_gives_an_object(client):
    chat = client.chat.completions.create(
        model="m", max_tokens=300, temperature=0, response_format={"type": "json_object"},
        messages=[{"role": "user", "content": 'A JSON object with the keys "name" and "colour" of a cat.'}])
    assert chat.choices[0].finish_reason == "stop", chat.choices[0].message.content
    assert isinstance(json.loads(chat.choices[0].message.content), dict)


def test_sampled_answers_validate_too(client):
    whole = 0
    for seed in range(4):
        chat = ask(client, SCHEMAS["order"], "order", temperature=1.0, seed=seed)
        if chat.choices[0].finish_reason == "stop":  # else max_tokens cut a long value
            jsonschema.validate(json.loads(chat.choices[0].message.content), SCHEMAS["order"])
            whole += 1
    assert whole >= 2, "too few sampled answers were completed to check them"


@pytest.mark.parametrize("max_tokens", [18, 26])
def test_a_tight_max_tokens_still_gets_whole_json(client, max_tokens):
    # Free text the model would run on with is closed while the JSON still fits.
    schema = {"type": "object", "properties": {"title": {"type": "string"}, "summary": {"type": "string"}},
              "required": ["title", "summary"], "additionalProperties": False}
    chat = client.chat.completions.create(
        model="m", max_tokens=max_tokens, temperature=0,
        messages=[{"role": "user", "content": "Summarize the history of Rome in great detail, as JSON."}],
        response_format={"type": "json_schema", "json_schema": {"name": "s", "schema": schema}})
    choice = chat.choices[0]
    assert choice.finish_reason == "stop", choice.message.content
    assert chat.usage.completion_tokens <= max_tokens
    jsonschema.validate(json.loads(choice.message.content), schema)


def test_the_clients_parse_helper_gets_its_model(client):
    class Step(pydantic.BaseModel):
        explanation: str = pydantic.Field(max_length=60)
        output: int

    class Solution(pydantic.BaseModel):
        steps: List[Step] = pydantic.Field(max_length=3)
        final_answer: int
        checked: Optional[bool]

    result = client.beta.chat.completions.parse(
        model="m", max_tokens=400, temperature=0, response_format=Solution,
        messages=[{"role": "user", "content": "Solve 2 + 3 step by step."}])
    message = result.choices[0].message
    assert result.choices[0].finish_reason == "stop", message.content
    assert isinstance(message.parsed, Solution)
    assert len(message.parsed.steps) <= 3


def test_a_gbnf_grammar_holds_a_completion(client):
    r = client.completions.create(model="m", prompt="Is Paris in France? Answer:", max_tokens=20,
                                  temperature=0, extra_body={"grammar": 'root ::= " " ("yes" | "no") "."'})
    assert r.choices[0].text in (" yes.", " no.")
    assert r.choices[0].finish_reason == "stop"


def test_what_cannot_be_honoured_is_a_400_naming_it(client):
    message = expect_400(lambda: ask(client, {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
                                     "list"), "response_format")
    assert "uniqueItems" in message
    expect_400(lambda: client.completions.create(model="m", prompt="a", max_tokens=4,
                                                 extra_body={"grammar": "root ::= undefined"}), "grammar")
