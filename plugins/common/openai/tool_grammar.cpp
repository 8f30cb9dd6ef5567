#include "tool_grammar.hpp"

#include <lpx/engine.h>

namespace lpx::openai {
namespace {

namespace json = boost::json;

// How one call is written in a syntax: `begin` + name + `middle` + arguments + `end`.
struct CallShape {
  const char* begin;
  const char* middle;
  const char* end;
  const char* separator;  // between calls
  const char* trigger;    // what opens a call in free text
};

CallShape shape(ToolSyntax syntax) {
  switch (syntax) {
    case ToolSyntax::kLlama3Json:
      return {"{\"name\": \"", "\", \"parameters\": ", "}", "; ", "{\"name\": "};
    case ToolSyntax::kGranite:
    case ToolSyntax::kPhi4Mini:
      return {"{\"name\": \"", "\", \"arguments\": ", "}", ", ", "[{\"name\": "};
    default:
      return {"<tool_call>\n{\"name\": \"", "\", \"arguments\": ", "}\n</tool_call>", "\n", "<tool_call>"};
  }
}

// Llama 3.x templates render one call per turn (they raise on more), so its answers make one.
bool single_call(const ToolUse& tools) { return !tools.parallel || tools.syntax == ToolSyntax::kLlama3Json; }

bool list_syntax(ToolSyntax syntax) { return syntax == ToolSyntax::kGranite || syntax == ToolSyntax::kPhi4Mini; }

// The schema a function's arguments are held to: an object always (a function without
// parameters takes none; `{}` or a schema without a type would allow any JSON value, which is
// no call).
json::value arguments_schema(const ToolFunction& f) {
  if (f.parameters.is_null()) {
    return json::object{{"type", "object"}, {"properties", json::object()}, {"additionalProperties", false}};
  }
  json::object schema = f.parameters.as_object();
  const bool decided = schema.contains("type") || schema.contains("anyOf") || schema.contains("oneOf") ||
                       schema.contains("allOf") || schema.contains("$ref") || schema.contains("enum") ||
                       schema.contains("const");
  if (!decided) schema["type"] = "object";
  return schema;
}

json::object tag(const ToolFunction& f, const CallShape& s, const char* prefix, const char* suffix) {
  return json::object{
      {"type", "tag"},
      {"begin", std::string(prefix) + s.begin + f.name + s.middle},
      // One whitespace character at most between JSON tokens: small models otherwise may
      // loop on newlines inside an object they cannot close.
      {"content", {{"type", "json_schema"}, {"json_schema", arguments_schema(f)}, {"max_whitespace_cnt", 1}}},
      {"end", std::string(s.end) + suffix}};
}

// Calls only: at least one, and only one unless parallel or when a function is named.
json::object calls_only(const ToolUse& tools) {
  const CallShape s = shape(tools.syntax);
  json::array tags;
  for (const ToolFunction& f : tools.functions) {
    if (tools.choice == ToolChoice::kNamed && f.name != tools.named) continue;
    tags.push_back(tag(f, s, "", ""));
  }
  const bool one = single_call(tools) || tools.choice == ToolChoice::kNamed;
  json::object calls{{"type", "tags_with_separator"},
                     {"tags", std::move(tags)},
                     {"separator", s.separator},
                     {"at_least_one", true},
                     {"stop_after_first", one}};
  if (!list_syntax(tools.syntax)) return calls;
  return json::object{{"type", "sequence"},
                      {"elements", json::array{json::object{{"type", "const_string"}, {"value", "["}},
                                               std::move(calls),
                                               json::object{{"type", "const_string"}, {"value", "]"}}}}};
}

// Free text in which each call, once opened, follows its function's schema.
json::object triggered_calls(const ToolUse& tools) {
  const CallShape s = shape(tools.syntax);
  const bool list = list_syntax(tools.syntax);
  json::array tags;
  for (const ToolFunction& f : tools.functions) tags.push_back(tag(f, s, list ? "[" : "", list ? "]" : ""));
  return json::object{{"type", "triggered_tags"},
                      {"triggers", json::array{s.trigger}},
                      {"tags", std::move(tags)},
                      {"at_least_one", false},
                      {"stop_after_first", single_call(tools)}};
}

json::object content_format(const ContentGrammar& content) {
  if (content.kind == LPX_GRAMMAR_JSON_SCHEMA) {
    return json::object{{"type", "json_schema"}, {"json_schema", json::parse(content.text)}, {"max_whitespace_cnt", 1}};
  }
  return json::object{{"type", "grammar"}, {"grammar", content.text}};
}

}  // namespace

std::string tool_call_grammar(const ToolUse& tools, const ContentGrammar& content) {
  if (!tools.active()) return {};
  json::object format;
  if (tools.forced()) {
    format = calls_only(tools);
  } else if (!content.text.empty()) {
    // Either the content the request's format asks for, or calls.
    format = json::object{{"type", "or"}, {"elements", json::array{content_format(content), calls_only(tools)}}};
  } else if (tools.any_strict() || single_call(tools)) {
    // Free text with calls that follow their functions, one at most where single.
    format = triggered_calls(tools);
  } else {
    return {};
  }
  return json::serialize(json::object{{"type", "structural_tag"}, {"format", std::move(format)}});
}

}  // namespace lpx::openai
