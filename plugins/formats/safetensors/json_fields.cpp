#include "json_fields.hpp"

#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>

namespace lpx::safetensors {

const boost::json::value* JsonFields::find(const char* key) const {
  const boost::json::value* value = object_.if_contains(key);
  return value == nullptr || value->is_null() ? nullptr : value;
}

std::string JsonFields::error(const char* key, const char* wanted) const {
  const boost::json::value* value = object_.if_contains(key);
  std::string found = value == nullptr ? "nothing" : boost::json::serialize(*value);
  if (found.size() > 80) found = found.substr(0, 80) + "...";
  return file_ + ": '" + key + "' should be " + wanted + ", found " + found;
}

tl::expected<std::uint64_t, std::string> JsonFields::count(const char* key) const {
  const boost::json::value* value = find(key);
  if (value != nullptr && value->is_uint64() && value->get_uint64() > 0) return value->get_uint64();
  if (value != nullptr && value->is_int64() && value->get_int64() > 0) {
    return static_cast<std::uint64_t>(value->get_int64());
  }
  return tl::unexpected(error(key, "a positive integer"));
}

tl::expected<std::uint64_t, std::string> JsonFields::count_or(const char* key,
                                                             std::uint64_t fallback) const {
  return find(key) == nullptr ? tl::expected<std::uint64_t, std::string>(fallback) : count(key);
}

tl::expected<std::optional<double>, std::string> JsonFields::optional_number(const char* key) const {
  const boost::json::value* value = find(key);
  if (value == nullptr) return std::optional<double>();
  if (value->is_double()) return std::optional<double>(value->get_double());
  if (value->is_int64()) return std::optional<double>(static_cast<double>(value->get_int64()));
  if (value->is_uint64()) return std::optional<double>(static_cast<double>(value->get_uint64()));
  return tl::unexpected(error(key, "a number"));
}

tl::expected<double, std::string> JsonFields::number_or(const char* key, double fallback) const {
  auto value = optional_number(key);
  if (!value) return tl::unexpected(value.error());
  return value->value_or(fallback);
}

tl::expected<bool, std::string> JsonFields::flag_or(const char* key, bool fallback) const {
  const boost::json::value* value = find(key);
  if (value == nullptr) return fallback;
  if (value->is_bool()) return value->get_bool();
  return tl::unexpected(error(key, "true or false"));
}

tl::expected<std::optional<std::string>, std::string> JsonFields::optional_string(
    const char* key) const {
  const boost::json::value* value = find(key);
  if (value == nullptr) return std::optional<std::string>();
  if (value->is_string()) return std::optional<std::string>(std::string(value->get_string()));
  return tl::unexpected(error(key, "a string"));
}

}  // namespace lpx::safetensors
