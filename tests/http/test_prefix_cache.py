"""Automatic prefix caching through the server, with the official client on the default model:
requests that resend the same long system prompt reuse its KV blocks (the real count in
`usage.prompt_tokens_details.cached_tokens`), answer exactly as a server with the cache off
(`--set engine.prefix_cache=false`) does, and /metrics counts the hits (docs/engine.md).
"""
import re

import openai
import pytest

from conftest import request, start_server

SYSTEM = "You are the help desk of a small town library. " + " ".join(
    f"Rule {i}: books of shelf {i} may be borrowed for {i + 6} days and renewed {i % 3 + 1} times."
    for i in range(1, 30))
QUESTIONS = ["Can I renew a book from shelf 4?", "How long may I keep a book of shelf 12?",
             "Can I renew a book from shelf 4?"]


def client_of(srv):
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", timeout=120).with_options(max_retries=0)


@pytest.fixture(scope="module")
def servers():
    on = start_server("--max-sequences", "2")
    off = start_server("--max-sequences", "2", "--set", "engine.prefix_cache=false")
    yield on, off
    assert on.stop() == 0, on.log()
    assert off.stop() == 0, off.log()


def ask(srv, question):
    return client_of(srv).chat.completions.create(
        model="m", max_tokens=16, temperature=0,
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": question}])


def metric(srv, name):
    status, _, body = request(srv, "GET", "/metrics")
    assert status == 200
    match = re.search(rf"^{name}(?:{{model=\"[^\"]*\"}})? ([0-9.e+]+)$", body.decode(), re.MULTILINE)
    assert match, f"{name} missing from /metrics"
    return float(match.group(1))


def test_a_resent_system_prompt_is_reused_and_answers_the_same(servers):
    on, off = servers
    for i, question in enumerate(QUESTIONS):
        cached, plain = ask(on, question), ask(off, question)
        assert cached.choices[0].message.content == plain.choices[0].message.content, question
        assert cached.usage.prompt_tokens == plain.usage.prompt_tokens
        assert plain.usage.prompt_tokens_details.cached_tokens == 0
        reused = cached.usage.prompt_tokens_details.cached_tokens
        if i == 0:
            assert reused == 0
        else:
            # The system turn is some 600 tokens; everything up to the question is reused.
            assert reused >= 512 and reused % 16 == 0 and reused < cached.usage.prompt_tokens, reused
    assert metric(on, "lpx_prefix_cache_hits_total") >= 2 * 32
    assert metric(on, "lpx_prefix_cache_misses_total") > 0
    assert metric(on, "lpx_prefix_cache_blocks") > 0
    assert metric(off, "lpx_prefix_cache_hits_total") == 0
    assert metric(off, "lpx_prefix_cache_blocks") == 0
