#include "tool_use.hpp"

#include <algorithm>

#include "api_error.hpp"
#include "json_fields.hpp"

namespace lpx::openai {
namespace {

namespace json = boost::json;

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

ToolFunction read_function(const json::value& tool) {
  const json::object* t = tool.if_object();
  const json::value* type = t ? t->if_contains("type") : nullptr;
  if (type == nullptr || !type->is_string() || type->get_string() != "function") {
    throw bad_request("tools: only tools of type 'function' are supported", "tools");
  }
  for (const auto& [key, value] : *t) {
    if (key != "type" && key != "function") {
      throw bad_request("tools: unrecognized tool field '" + std::string(key) + "'", "tools");
    }
  }
  const json::value* f = t->if_contains("function");
  if (f == nullptr || !f->is_object()) field_error("tools", "function tools with a 'function' object");
  ToolFunction out;
  for (const auto& [key, value] : f->get_object()) {
    if (key == "name" && value.is_string() && valid_name(value.get_string())) {
      out.name = value.get_string();
    } else if (key == "name") {
      field_error("tools", "functions named with 1 to 64 letters, digits, '_' or '-'");
    } else if (key == "description" && (value.is_string() || value.is_null())) {
      if (value.is_string()) out.description = value.get_string();
    } else if (key == "parameters" && (value.is_object() || value.is_null())) {
      out.parameters = value;
    } else if (key == "strict" && (value.is_bool() || value.is_null())) {
      out.strict = value.is_bool() && value.get_bool();
    } else if (key == "description" || key == "parameters" || key == "strict") {
      field_error("tools", std::string("functions whose '") + std::string(key) + "' is " +
                               (key == "parameters" ? "a JSON Schema object" : key == "strict" ? "a boolean" : "a string"));
    } else {
      throw bad_request("tools: unrecognized function field '" + std::string(key) + "'", "tools");
    }
  }
  if (out.name.empty()) field_error("tools", "functions with a 'name'");
  return out;
}

}  // namespace

bool ToolUse::any_strict() const {
  return std::any_of(functions.begin(), functions.end(), [](const ToolFunction& f) { return f.strict; });
}

std::vector<std::string> ToolUse::names() const {
  std::vector<std::string> out;
  for (const ToolFunction& f : functions) out.push_back(f.name);
  return out;
}

json::array ToolUse::definitions() const {
  json::array out;
  for (const ToolFunction& f : functions) {
    json::object function{{"name", f.name}};
    if (!f.description.empty()) function["description"] = f.description;
    if (!f.parameters.is_null()) function["parameters"] = f.parameters;
    out.push_back(json::object{{"type", "function"}, {"function", std::move(function)}});
  }
  return out;
}

ToolUse read_tool_use(const json::object& body, ToolSyntax syntax, bool system_role) {
  const JsonFields f(body);
  for (const char* legacy : {"functions", "function_call"}) {
    if (f.find(legacy) != nullptr) {
      throw bad_request(std::string("'") + legacy + "' is the deprecated form of tool calling: use "
                        "'tools' and 'tool_choice'", legacy);
    }
  }
  ToolUse out;
  out.syntax = syntax;
  out.system_role = system_role;
  if (const json::value* tools = f.find("tools")) {
    if (!tools->is_array()) field_error("tools", "an array of function tools");
    if (tools->get_array().size() > 128) field_error("tools", "at most 128 tools");
    for (const json::value& tool : tools->get_array()) {
      ToolFunction function = read_function(tool);
      const auto same = [&](const ToolFunction& g) { return g.name == function.name; };
      if (std::any_of(out.functions.begin(), out.functions.end(), same)) {
        throw bad_request("tools: the function '" + function.name + "' is offered twice", "tools");
      }
      out.functions.push_back(std::move(function));
    }
  }
  out.parallel = f.boolean("parallel_tool_calls").value_or(true);
  out.choice = out.functions.empty() ? ToolChoice::kNone : ToolChoice::kAuto;
  const json::value* choice = f.find("tool_choice");
  if (choice == nullptr) return out;
  if (choice->is_string()) {
    const std::string_view c = choice->get_string();
    if (c == "none") {
      out.choice = ToolChoice::kNone;
    } else if (c == "auto" || c == "required") {
      out.choice = c == "auto" ? ToolChoice::kAuto : ToolChoice::kRequired;
    } else {
      field_error("tool_choice", "none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
  } else {
    const json::object* o = choice->if_object();
    const json::value* type = o ? o->if_contains("type") : nullptr;
    const json::value* function = o ? o->if_contains("function") : nullptr;
    const json::value* name = function && function->is_object() ? function->get_object().if_contains("name") : nullptr;
    if (type == nullptr || !type->is_string() || type->get_string() != "function" || name == nullptr ||
        !name->is_string()) {
      field_error("tool_choice", "none, auto, required or {\"type\": \"function\", \"function\": {\"name\": ...}}");
    }
    out.choice = ToolChoice::kNamed;
    out.named = name->get_string();
  }
  if (out.choice != ToolChoice::kNone && out.functions.empty()) {
    throw bad_request("'tool_choice' needs 'tools'", "tool_choice");
  }
  if (out.choice == ToolChoice::kNamed) {
    const auto names = out.names();
    if (std::find(names.begin(), names.end(), out.named) == names.end()) {
      throw bad_request("tool_choice: no tool named '" + out.named + "' is offered", "tool_choice");
    }
  }
  return out;
}

}  // namespace lpx::openai
