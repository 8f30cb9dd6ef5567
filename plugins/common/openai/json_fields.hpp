// Typed reads of a JSON request body. A field that is absent or null reads as nullopt; a field of
// the wrong type or out of range is a 400 naming it (OpenAI's `param`). Unknown fields are ignored.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <boost/json.hpp>

namespace lpx::openai {

// Parses a request body that must be a JSON object: malformed JSON, invalid UTF-8 and other
// top-level types are 400 with fixed messages (the body is never echoed).
boost::json::object parse_json_object(std::string_view body);

class JsonFields {
 public:
  explicit JsonFields(const boost::json::object& object) : object_(object) {}

  // nullptr when absent or null.
  const boost::json::value* find(const char* name) const;
  std::optional<double> number(const char* name, double min, double max) const;
  std::optional<std::int64_t> integer(const char* name, std::int64_t min, std::int64_t max) const;
  std::optional<bool> boolean(const char* name) const;
  std::optional<std::string> string(const char* name) const;

 private:
  const boost::json::object& object_;
};

// "'name' must be <what>", the one wording of type and range errors.
[[noreturn]] void field_error(const char* name, const std::string& what);

}  // namespace lpx::openai
