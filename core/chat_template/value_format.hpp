// Turning values into text exactly as Python does: str() (what {{ }} prints), repr() (how
// values look inside a printed list or dict) and json.dumps (the tojson filter).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "chat_template/value.hpp"

namespace lpx::core::jinja {

std::string python_float_repr(double number);  // repr(float): 1.0, 1e+16, 0.30000000000000004
std::string python_string_repr(std::string_view text);  // 'it\'s' style quoting
std::string to_str(const Value& value);                 // str(value); undefined prints ""
std::string to_repr(const Value& value);                // repr(value)

// For objects that print their own contents (namespaces): like Python's repr of a container that
// contains itself, an object already being printed further up prints as `recursive_text`.
std::string repr_once(const void* identity, std::string_view recursive_text,
                      const std::function<std::string()>& print);

// json.dumps(value, ensure_ascii=..., indent=..., separators=..., sort_keys=...).
struct JsonOptions {
  bool ensure_ascii = false;
  std::optional<std::string> indent;          // nullopt: everything on one line
  std::optional<std::string> item_separator;  // defaults: ", " (one line) or "," (indented)
  std::string key_separator = ": ";
  bool sort_keys = false;
};
std::string to_json(const Value& value, const JsonOptions& options);

}  // namespace lpx::core::jinja
