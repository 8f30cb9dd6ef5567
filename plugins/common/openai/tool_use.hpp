// Tool calling in a chat request: the functions offered (`tools`), which call the model must
// make (`tool_choice`), and whether it may make several at once (`parallel_tool_calls`),
// validated as OpenAI defines them.
#pragma once

#include <string>
#include <vector>

#include <boost/json.hpp>

#include "tool_syntax.hpp"

namespace lpx::openai {

struct ToolFunction {
  std::string name;         // [A-Za-z0-9_-]{1,64}
  std::string description;  // may be empty
  boost::json::value parameters;  // a JSON Schema object; null when the function takes none
  bool strict = false;      // arguments held to `parameters` even when the call is optional
};

enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

struct ToolUse {
  std::vector<ToolFunction> functions;  // empty: no tools offered
  ToolChoice choice = ToolChoice::kNone;
  std::string named;  // kNamed: the function that must be called
  bool parallel = true;
  ToolSyntax syntax = ToolSyntax::kDescribedHermes;
  bool system_role = true;  // whether the template takes a system message (Gemma 2's does not)

  // Whether the answer may hold tool calls (and is parsed for them).
  bool active() const { return !functions.empty() && choice != ToolChoice::kNone; }
  // Whether the answer must be calls: every call is then held to its function's schema.
  bool forced() const { return choice == ToolChoice::kRequired || choice == ToolChoice::kNamed; }
  bool any_strict() const;
  std::vector<std::string> names() const;
  // The OpenAI tool definitions again ({"type": "function", "function": {...}}), as templates
  // read them.
  boost::json::array definitions() const;
};

// Reads `tools`, `tool_choice` and `parallel_tool_calls` of a chat body (absent: no tools).
// Throws ApiError (400) naming the field for a malformed or unsupported value: a tool that is
// not a function, a field of a function LPX does not read, a duplicate or invalid name, a
// tool_choice that names no offered function.
ToolUse read_tool_use(const boost::json::object& body, ToolSyntax syntax, bool system_role);

}  // namespace lpx::openai
