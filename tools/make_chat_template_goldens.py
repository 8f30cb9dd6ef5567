#!/usr/bin/python3
"""Writes the golden files for the chat-template engine (tests/chat_template/golden/).

Every case renders one chat template with Python's jinja2, set up exactly as Hugging Face
transformers sets it up in apply_chat_template:

  * jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
    jinja2.ext.loopcontrols extension and a pass-through {% generation %} tag;
  * the tojson filter replaced by json.dumps(x, ensure_ascii=False, indent=..., separators=...,
    sort_keys=...);
  * the globals raise_exception(message) (raises TemplateError(message)) and strftime_now(format).

strftime_now formats a fixed local time, FIXED_TIME below, so the goldens never depend on the day
they were made; each case records it as "fixed_time" and the C++ test renders with the same time.

Run with Debian's python3-jinja2 (the default python3 on PATH may not have jinja2):

    /usr/bin/python3 tools/make_chat_template_goldens.py

For each case it writes golden/<template>/<case>.json (the template and the full render context)
and next to it <case>.out (the exact output bytes) or <case>.error (the exact raise_exception
message). Old golden files are removed first, so the folder always matches this script.

It also writes differential/cases.json: a fixed, seeded set of small random templates (whitespace
control, scoping, expressions and filters) with jinja2's output, or "error": true where jinja2
refuses them. These pin down corner cases no hand-written test thinks of.
"""

import datetime
import json
import pathlib
import random
import shutil
import sys
import warnings

import jinja2
import jinja2.ext
import jinja2.nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

REPO = pathlib.Path(__file__).resolve().parent.parent
SHARED_TEMPLATES = REPO.parent / "shared" / "templates"
LOCAL_TEMPLATES = REPO / "tests" / "chat_template" / "templates"
BUILTIN_TEMPLATES = REPO / "core" / "model" / "chat_templates"  # LPX's copies (gemma2, gemma3)
GOLDEN = REPO / "tests" / "chat_template" / "golden"
DIFFERENTIAL = REPO / "tests" / "chat_template" / "differential" / "cases.json"

FIXED_TIME = datetime.datetime(2025, 3, 14, 9, 26, 53)


class GenerationTag(jinja2.ext.Extension):
    """Hugging Face's {% generation %}...{% endgeneration %}: outside assistant-mask tracking it
    renders its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return jinja2.nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return FIXED_TIME.strftime(format)

    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationTag, jinja2.ext.loopcontrols]
    )
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = strftime_now
    return environment


# --- conversations -------------------------------------------------------------------------------

SYSTEM = {"role": "system", "content": "You are a concise assistant. Answer in one sentence."}
USER_HELLO = {"role": "user", "content": "Hello! How are you?"}
ASSISTANT_FINE = {"role": "assistant", "content": "I'm doing well, thank you. How can I help?"}
USER_CAPITAL = {"role": "user", "content": "What is the capital of France?"}
ASSISTANT_PARIS = {"role": "assistant", "content": "The capital of France is Paris."}
USER_UNICODE = {
    "role": "user",
    "content": "  Traduis « bonjour » en 日本語, s'il te plaît — and keep the \"quotes\" & <tags>.\n\n",
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_current_weather",
        "description": "Get the current weather in a given city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city, e.g. Zürich"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {
    "type": "function",
    "function": {
        "name": "get_time",
        "description": "Current time in a time zone.",
        "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}, "required": ["tz"]},
    },
}
USER_WEATHER = {"role": "user", "content": "What's the weather like in Zürich today?"}
TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "type": "function",
            "function": {"name": "get_current_weather", "arguments": {"city": "Zürich", "unit": "celsius", "days": 1}},
        }
    ],
}
TOOL_RESULT = {"role": "tool", "name": "get_current_weather", "content": '{"temperature": 21.5, "condition": "sunny"}'}
ASSISTANT_WEATHER = {"role": "assistant", "content": "It is sunny in Zürich at 21.5 °C."}


def context(messages, add_generation_prompt, bos_token, eos_token, **extra):
    """The variables apply_chat_template passes: messages, tools, documents,
    add_generation_prompt, the special tokens, then any extra template kwargs."""
    variables = {
        "messages": messages,
        "tools": None,
        "documents": None,
        "add_generation_prompt": add_generation_prompt,
        "bos_token": bos_token,
        "eos_token": eos_token,
    }
    variables.update(extra)
    return variables


def common_cases(bos, eos, **extra):
    """Conversations every template gets."""
    return {
        "single_user_turn": context([USER_HELLO], True, bos, eos, **extra),
        "system_multi_turn": context([SYSTEM, USER_HELLO, ASSISTANT_FINE, USER_CAPITAL], True, bos, eos, **extra),
        "multi_turn_no_generation_prompt": context(
            [USER_HELLO, ASSISTANT_FINE, USER_CAPITAL], False, bos, eos, **extra
        ),
        "assistant_last": context([USER_CAPITAL, ASSISTANT_PARIS], False, bos, eos, **extra),
        "unicode_and_whitespace": context([USER_UNICODE], True, bos, eos, **extra),
    }


def tool_cases(bos, eos, **extra):
    return {
        "tools_offered": context([USER_WEATHER], True, bos, eos, tools=[WEATHER_TOOL, TIME_TOOL], **extra),
        "tool_call_and_result": context(
            [USER_WEATHER, TOOL_CALL, TOOL_RESULT, ASSISTANT_WEATHER], False, bos, eos, tools=[WEATHER_TOOL], **extra
        ),
    }


def cases_for(template):
    """All cases of one template: {case name: context}."""
    if template == "smollm2-135m-instruct.jinja":
        bos, eos = "<|im_start|>", "<|im_end|>"
        return common_cases(bos, eos)
    if template == "HuggingFaceTB-SmolLM3-3B.jinja":
        bos, eos = "", "<|im_end|>"
        cases = common_cases(bos, eos)
        cases["no_think_in_system"] = context(
            [{"role": "system", "content": "Be brief. /no_think"}, USER_CAPITAL], True, bos, eos
        )
        cases["enable_thinking_false"] = context([USER_CAPITAL, ASSISTANT_PARIS], True, bos, eos, enable_thinking=False)
        cases["tool_result_turn"] = context([USER_WEATHER, TOOL_RESULT], True, bos, eos)
        return cases
    if template == "Qwen-Qwen2.5-7B-Instruct.jinja":
        bos, eos = None, "<|im_end|>"
        cases = {**common_cases(bos, eos), **tool_cases(bos, eos)}
        cases["tools_with_system"] = context([SYSTEM, USER_WEATHER], True, bos, eos, tools=[WEATHER_TOOL])
        cases["parallel_tool_calls"] = context(
            [
                USER_WEATHER,
                {
                    "role": "assistant",
                    "content": "Let me check.",
                    "tool_calls": [
                        TOOL_CALL["tool_calls"][0],
                        {"name": "get_time", "arguments": '{"tz": "Europe/Zurich"}'},
                    ],
                },
                TOOL_RESULT,
                {"role": "tool", "content": "09:26"},
            ],
            True,
            bos,
            eos,
            tools=[WEATHER_TOOL, TIME_TOOL],
        )
        return cases
    if template == "google-gemma-2-2b-it.jinja":
        bos, eos = "<bos>", "<eos>"
        cases = common_cases(bos, eos)
        del cases["system_multi_turn"]  # gemma refuses system messages; see the error cases
        cases["error_system_role"] = context([SYSTEM, USER_HELLO], True, bos, eos)
        cases["error_roles_not_alternating"] = context([USER_HELLO, USER_CAPITAL], True, bos, eos)
        return cases
    if template == "gemma3.jinja":  # Gemma 3's: a system message is folded into the first turn
        bos, eos = "<bos>", "<eos>"
        cases = common_cases(bos, eos)
        cases["error_roles_not_alternating"] = context([USER_HELLO, USER_CAPITAL], True, bos, eos)
        return cases
    if template == "Qwen-Qwen3-0.6B.jinja":
        bos, eos = None, "<|im_end|>"
        cases = {**common_cases(bos, eos), **tool_cases(bos, eos)}
        cases["enable_thinking_false"] = context([USER_CAPITAL], True, bos, eos, enable_thinking=False)
        cases["past_thinking_stripped"] = context(
            [USER_HELLO, {"role": "assistant", "content": "<think>\nGreet back.\n</think>\n\nHello!"},
             USER_CAPITAL], True, bos, eos)
        return cases
    if template == "ibm-granite-granite-3.3-2B-Instruct.jinja":
        bos, eos = "<|end_of_text|>", "<|end_of_text|>"
        cases = {**common_cases(bos, eos), **tool_cases(bos, eos)}
        documents = [
            {"doc_id": 1, "title": "Weather", "text": "Zürich is sunny today."},
            {"doc_id": "b", "title": "Time", "text": "It is morning."},
        ]
        cases["documents_with_controls"] = context(
            [USER_WEATHER], True, bos, eos, documents=documents, controls={"citations": True, "hallucinations": True}
        )
        cases["documents_and_tools"] = context([USER_WEATHER], True, bos, eos, documents=documents, tools=[TIME_TOOL])
        cases["thinking"] = context([USER_CAPITAL], True, bos, eos, thinking=True)
        cases["controls_length"] = context([USER_CAPITAL], True, bos, eos, controls={"length": "short"})
        return cases
    if template == "meta-llama-Llama-3.2-3B-Instruct.jinja":
        bos, eos = "<|begin_of_text|>", "<|eot_id|>"
        date = {"date_string": "26 Jul 2024"}
        cases = {**common_cases(bos, eos, **date), **tool_cases(bos, eos, **date)}
        cases["date_from_strftime_now"] = context([USER_HELLO], True, bos, eos)
        cases["tools_in_system_message"] = context(
            [SYSTEM, USER_WEATHER], True, bos, eos, tools=[WEATHER_TOOL], tools_in_user_message=False, **date
        )
        cases["custom_tools"] = context([USER_WEATHER], True, bos, eos, custom_tools=[TIME_TOOL], **date)
        cases["tool_result_as_mapping"] = context(
            [USER_WEATHER, TOOL_CALL, {"role": "ipython", "content": {"temperature": 21.5, "ok": True}}],
            True,
            bos,
            eos,
            tools=[WEATHER_TOOL],
            **date,
        )
        cases["error_two_tool_calls"] = context(
            [
                USER_WEATHER,
                {"role": "assistant", "tool_calls": TOOL_CALL["tool_calls"] * 2},
            ],
            True,
            bos,
            eos,
            tools=[WEATHER_TOOL],
            **date,
        )
        return cases
    if template == "microsoft-Phi-3.5-mini-instruct.jinja":
        bos, eos = "<s>", "<|endoftext|>"
        cases = common_cases(bos, eos)
        cases["empty_system_message_skipped"] = context(
            [{"role": "system", "content": ""}, USER_HELLO], True, bos, eos
        )
        return cases
    raise SystemExit(f"no cases defined for template {template}")


# --- random differential cases -------------------------------------------------------------------

# The variables the random templates see (the C++ test passes the same object).
DIFFERENTIAL_CONTEXT = {
    "x": "X",
    "z": "Z",
    "d": {"a": 1, "b": [1, 2]},
    "s": "h\u00e9llo",
    "n": None,
    "l": [3, 1, 2],
    "m": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": " yo "}],
    "f": 1.5,
    "t": True,
}


def random_whitespace_template(rng):
    """Tags with random -/+ markers between runs of spaces, tabs and newlines."""
    spaces = [" ", "  ", "\t", "\n", "\n\n", " \n ", "\r\n", "\u00a0", "", "", "x", "ab ", " cd", "\n  ", "  \n"]

    def sign():
        return rng.choice(["", "", "-", "+"])

    def gap():
        return "".join(rng.choice(spaces) for _ in range(rng.randint(0, 3)))

    def block(depth):
        parts = []
        for _ in range(rng.randint(1, 4)):
            k = rng.random()
            if k < 0.25 or depth > 2:
                parts.append(gap())
            elif k < 0.4:
                value = rng.choice(["'v'", "x", "loop.index if loop is defined else 0", "' s '"])
                parts.append("{{" + sign() + " " + value + " " + rng.choice(["", "-"]) + "}}")
            elif k < 0.5:
                parts.append("{#" + sign() + " c " + sign() + "#}")
            elif k < 0.65:
                otherwise = "{%" + sign() + " else " + sign() + "%}" + block(depth + 1) if rng.random() < 0.3 else ""
                parts.append("{%" + sign() + " if " + rng.choice(["true", "false", "x"]) + " " + sign() + "%}" +
                             block(depth + 1) + otherwise + "{%" + sign() + " endif " + sign() + "%}")
            elif k < 0.8:
                parts.append("{%" + sign() + " for i in [1, 2] " + sign() + "%}" + block(depth + 1) +
                             "{%" + sign() + " endfor " + sign() + "%}")
            elif k < 0.9:
                parts.append("{%" + sign() + " set x = " + rng.choice(["'a'", "1", "x ~ 1"]) + " " + sign() + "%}")
            else:
                parts.append("{%" + sign() + " raw " + rng.choice(["", "-"]) + "%}" + gap() + "{{ y }}" + gap() +
                             "{%" + sign() + " endraw " + sign() + "%}")
            parts.append(gap())
        return "".join(parts)

    return block(0)


def random_scope_template(rng):
    """Assignments, loops, macros, with, block set and filter blocks reading and writing the
    same few names, some of which the context also has."""
    names = ["x", "y", "z"]

    def expression():
        return rng.choice([rng.choice(names), rng.choice(names) + " is defined", "(%s|default('d'))" % rng.choice(names),
                           "(loop.index if loop is defined else -1)", "ns.v", rng.choice(names) + " ~ '!'", "f()"])

    def statements(depth):
        out = []
        for _ in range(rng.randint(1, 4)):
            k = rng.random()
            if k < 0.25 or depth > 2:
                out.append("[{{ %s }}]" % expression())
            elif k < 0.4:
                out.append("{%% set %s = %s %%}" % (rng.choice(names), rng.choice(["'s%d'" % depth, expression()])))
            elif k < 0.5:
                elif_part = rng.choice(["", "{%% elif %s %%}%s" % (expression(), statements(depth + 1))])
                else_part = rng.choice(["", "{%% else %%}%s" % statements(depth + 1)])
                out.append("{%% if %s %%}%s%s%s{%% endif %%}" % (expression(), statements(depth + 1), elif_part, else_part))
            elif k < 0.62:
                out.append("{%% for %s in [1, 2] %%}%s{%% else %%}E{%% endfor %%}" % (rng.choice(["i", "x", "y"]), statements(depth + 1)))
            elif k < 0.7:
                out.append("{%% macro f() %%}%s{%% endmacro %%}" % statements(depth + 1))
            elif k < 0.76:
                out.append("{%% with %s = %s %%}%s{%% endwith %%}" % (rng.choice(names), expression(), statements(depth + 1)))
            elif k < 0.82:
                out.append("{%% set %s %%}%s{%% endset %%}" % (rng.choice(names), statements(depth + 1)))
            elif k < 0.87:
                out.append("{%% filter upper %%}%s{%% endfilter %%}" % statements(depth + 1))
            elif k < 0.93:
                out.append("{%% set ns.v = %s %%}" % expression())
            else:
                out.append("{{ f() }}")
        return "".join(out)

    return "{% set ns = namespace(v=0) %}{% macro f() %}M{% endmacro %}" + statements(0)


def random_expression_template(rng):
    """One {{ }} combining literals, context values, operators, filters, tests and subscripts.
    Leaves out what the engine documents as different (big integers, complex powers, Markup)."""
    atoms = ["0", "1", "-3", "7", "2.5", "-0.5", "1e10", "0.1", "'a'", "'Ab c'", "''", "' x '", "true", "false",
             "none", "[1, 2]", "[]", "['b', 'a']", "{'k': 1}", "(1, 2)", "l", "s", "d", "n", "f", "m", "missing",
             "'\u00e9'", "3.0", "10"]
    operators = ["+", "-", "*", "/", "//", "%", "~", "==", "!=", "<", "<=", ">", ">=", "and", "or", "in", "not in"]
    filters = ["length", "string", "int", "float", "abs", "first", "last", "list", "sort", "unique|list",
               "reverse|list", "trim", "upper", "lower", "title", "capitalize", "tojson", "join(',')", "default(0)",
               "round", "round(1)", "items|list", "sum", "max", "min", "select|list", "map('string')|list", "count",
               "int(5)", "float(1.5)", "indent(2)", "batch(2)|list", "dictsort", "wordcount", "center(7)",
               "truncate(5)", "tojson(indent=1)", "replace('a', 'b')", "format(1)"]
    tests = ["defined", "none", "string", "number", "integer", "float", "mapping", "iterable", "sequence", "odd",
             "even", "true", "false", "boolean", "lower", "upper", "divisibleby 2", "in [1, 2]", "eq 1"]

    def expression(depth):
        k = rng.random()
        if depth > 3 or k < 0.3:
            return rng.choice(atoms)
        if k < 0.55:
            return "(%s %s %s)" % (expression(depth + 1), rng.choice(operators), expression(depth + 1))
        if k < 0.7:
            return "(%s|%s)" % (expression(depth + 1), rng.choice(filters))
        if k < 0.78:
            return "(%s is %s%s)" % (expression(depth + 1), rng.choice(["", "not "]), rng.choice(tests))
        if k < 0.83:
            return "(not %s)" % expression(depth + 1)
        if k < 0.88:
            return "(%s if %s else %s)" % (expression(depth + 1), expression(depth + 1), expression(depth + 1))
        if k < 0.93:
            return "%s[%s]" % (expression(depth + 1), rng.choice(["0", "-1", "1:", "::-1", "'k'", "5"]))
        return "[%s, %s]" % (expression(depth + 1), expression(depth + 1))

    return "{{ %s }}" % expression(0)


def write_differential_cases(environment):
    rng = random.Random(20250314)
    generators = [("whitespace", random_whitespace_template, 300), ("scope", random_scope_template, 250),
                  ("expression", random_expression_template, 400)]
    cases = []
    for kind, generate, count in generators:
        for _ in range(count):
            source = generate(rng)
            case = {"kind": kind, "template": source}
            try:
                case["expected"] = environment.from_string(source).render(**json.loads(json.dumps(DIFFERENTIAL_CONTEXT)))
            except Exception:  # any refusal: the engine must refuse too
                case["error"] = True
            cases.append(case)
    DIFFERENTIAL.parent.mkdir(parents=True, exist_ok=True)
    # One case per line keeps the file readable and its diffs small.
    lines = ",\n".join(json.dumps(case, ensure_ascii=False) for case in cases)
    text = '{"context": %s,\n"cases": [\n%s\n]}\n' % (json.dumps(DIFFERENTIAL_CONTEXT, ensure_ascii=False), lines)
    DIFFERENTIAL.write_bytes(text.encode("utf-8"))
    return len(cases)


def template_sources():
    """(name, path, location) of every template that gets goldens."""
    if not SHARED_TEMPLATES.is_dir():
        raise SystemExit(f"shared templates not found at {SHARED_TEMPLATES}")
    found = [(path.name, path, "shared") for path in sorted(SHARED_TEMPLATES.glob("*.jinja"))]
    found += [(path.name, path, "local") for path in sorted(LOCAL_TEMPLATES.glob("*.jinja"))]
    # gemma2.jinja is the shared google-gemma-2-2b-it.jinja, byte for byte: its goldens are those.
    found += [(path.name, path, "builtin") for path in [BUILTIN_TEMPLATES / "gemma3.jinja"]]
    return found


def main():
    # jinja2 compiles `{{ 5[1:] }}` to Python that CPython warns about; the warning is noise here.
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    if not jinja2.__version__.startswith("3.1."):
        raise SystemExit(f"expected jinja2 3.1.x (Debian's python3-jinja2), found {jinja2.__version__}")
    environment = make_environment()
    if GOLDEN.exists():
        shutil.rmtree(GOLDEN)
    count = 0
    for name, path, location in template_sources():
        template = environment.from_string(path.read_text(encoding="utf-8"))
        folder = GOLDEN / path.stem
        folder.mkdir(parents=True)
        for case, variables in cases_for(name).items():
            # Render from the JSON text itself so Python sees exactly what the C++ test loads.
            text = json.dumps(
                {"template": f"{location}/{name}", "fixed_time": FIXED_TIME.isoformat(), "context": variables},
                ensure_ascii=False,
                indent=2,
            )
            loaded = json.loads(text)
            try:
                output = template.render(**loaded["context"])
                expected_error = case.startswith("error_")
                if expected_error:
                    raise SystemExit(f"{name} {case}: expected raise_exception, got output")
                (folder / f"{case}.out").write_bytes(output.encode("utf-8"))
            except jinja2.exceptions.TemplateError as error:
                # Only raise_exception() is a recorded outcome; any other error is a broken case.
                if type(error) is not jinja2.exceptions.TemplateError or not case.startswith("error_"):
                    raise
                (folder / f"{case}.error").write_bytes(str(error).encode("utf-8"))
            (folder / f"{case}.json").write_bytes((text + "\n").encode("utf-8"))
            count += 1
    print(f"wrote {count} golden cases to {GOLDEN.relative_to(REPO)}", file=sys.stderr)
    differential = write_differential_cases(environment)
    print(f"wrote {differential} differential cases to {DIFFERENTIAL.relative_to(REPO)}", file=sys.stderr)


if __name__ == "__main__":
    main()
