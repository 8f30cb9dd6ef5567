// Typed reads of a JSON object's fields (config.json, tokenizer_config.json) with errors that
// name the file and the field: "config.json: 'hidden_size' should be a positive integer, found
// \"64\"".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <boost/json/object.hpp>
#include <tl/expected.hpp>

namespace lpx::safetensors {

class JsonFields {
 public:
  JsonFields(const boost::json::object& object, std::string file) : object_(object), file_(std::move(file)) {}

  const boost::json::object& object() const noexcept { return object_; }
  // The field, or NULL when absent or JSON null (transformers writes null for "not set").
  const boost::json::value* find(const char* key) const;
  std::string error(const char* key, const char* wanted) const;

  tl::expected<std::uint64_t, std::string> count(const char* key) const;  // a positive integer
  tl::expected<std::uint64_t, std::string> count_or(const char* key, std::uint64_t fallback) const;
  tl::expected<double, std::string> number_or(const char* key, double fallback) const;
  tl::expected<std::optional<double>, std::string> optional_number(const char* key) const;
  tl::expected<bool, std::string> flag_or(const char* key, bool fallback) const;
  tl::expected<std::optional<std::string>, std::string> optional_string(const char* key) const;

 private:
  const boost::json::object& object_;
  std::string file_;
};

}  // namespace lpx::safetensors
