// The grammar of an answer that may or must call tools: a structural tag (LPX_GRAMMAR_
// STRUCTURAL_TAG) in which each call is written in the model's own syntax, with its arguments
// held to the function's JSON Schema. Whenever there is a grammar, every call follows its
// schema, strict or not; without one (auto, parallel, nothing strict, no response_format) the
// answer is free.
//   - required / a named function: the answer is calls only (one when parallel_tool_calls is
//     false or a function is named);
//   - auto with a strict function, with parallel_tool_calls false, or in Llama 3's syntax (its
//     template renders one call per turn): free text, and a call once its opening is written
//     (one at most unless parallel);
//   - auto with a response_format or grammar: either the content it asks for, or calls.
// Granite and Phi-4-mini open their calls with a special token, which no grammar can produce:
// under a grammar their calls are the bare JSON list, which the parser reads as well.
#pragma once

#include <cstdint>
#include <string>

#include "tool_use.hpp"

namespace lpx::openai {

struct ContentGrammar {
  std::string text;          // a JSON Schema or a GBNF grammar; empty: none
  std::int32_t kind = 0;     // LPX_GRAMMAR_JSON_SCHEMA or LPX_GRAMMAR_GBNF
};

// The structural tag (JSON text) for `tools`, or "" when the answer is free text.
std::string tool_call_grammar(const ToolUse& tools, const ContentGrammar& content);

}  // namespace lpx::openai
