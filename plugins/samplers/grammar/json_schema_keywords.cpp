#include "json_schema_keywords.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include <boost/json.hpp>

namespace lpx::grammar {
namespace {

namespace json = boost::json;

// Keywords that constrain the output, all honoured by the conversion.
constexpr std::array<std::string_view, 31> kConstraints = {
    "type", "properties", "required", "additionalProperties", "enum", "const", "items",
    "prefixItems", "minItems", "maxItems", "anyOf", "oneOf", "allOf", "$ref", "$defs",
    "definitions", "minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "pattern", "format", "minProperties", "maxProperties",
    "patternProperties", "propertyNames", "unevaluatedProperties", "unevaluatedItems"};
// Keywords that only annotate: they constrain nothing, so nothing is dropped by passing them.
constexpr std::array<std::string_view, 13> kAnnotations = {
    "title", "description", "default", "examples", "$schema", "$id", "$comment", "deprecated",
    "readOnly", "writeOnly", "$anchor", "contentMediaType", "contentEncoding"};
// The string formats the conversion turns into patterns.
constexpr std::array<std::string_view, 14> kFormats = {
    "date", "time", "date-time", "duration", "email", "hostname", "ipv4", "ipv6", "uri",
    "uri-reference", "uri-template", "uuid", "json-pointer", "relative-json-pointer"};

template <std::size_t N>
bool in(const std::array<std::string_view, N>& list, std::string_view word) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

bool is_number_type(const json::object& schema) {
  const json::value* type = schema.if_contains("type");
  if (type == nullptr) return false;
  if (type->is_string()) return type->as_string() == "number";
  if (type->is_array()) {
    for (const json::value& t : type->as_array()) {
      if (t.is_string() && t.as_string() == "number") return true;
    }
  }
  return false;
}

std::string at(const std::string& path, std::string_view key) {
  return path + "/" + std::string(key);
}

std::string check(const json::value& node, const std::string& path);

// Each subschema of `value`: one schema, an array of them, or an object of named ones.
std::string check_each(const json::value& value, const std::string& path, bool named) {
  if (named && value.is_object()) {
    for (const auto& [name, sub] : value.as_object()) {
      if (auto why = check(sub, at(path, name)); !why.empty()) return why;
    }
  } else if (value.is_array()) {
    std::size_t i = 0;
    for (const json::value& sub : value.as_array()) {
      if (auto why = check(sub, path + "/" + std::to_string(i++)); !why.empty()) return why;
    }
  } else {
    return check(value, path);
  }
  return "";
}

std::string check(const json::value& node, const std::string& path) {
  if (node.is_bool()) return "";  // true: anything; false: nothing
  if (!node.is_object()) return "the schema at " + path + " is not an object";
  const json::object& schema = node.as_object();
  for (const auto& [key_view, value] : schema) {
    const std::string_view key = key_view;
    if (in(kAnnotations, key)) continue;
    if (!in(kConstraints, key)) {
      return "keyword '" + std::string(key) + "' at " + path + " is not supported";
    }
    if (key == "multipleOf" && is_number_type(schema)) {
      return "keyword 'multipleOf' at " + path + " is supported for integers only";
    }
    if (key == "allOf" && value.is_array() && value.as_array().size() > 1) {
      return "keyword 'allOf' at " + path + " is supported with one subschema only";
    }
    if (key == "format" && (!value.is_string() || !in(kFormats, value.as_string()))) {
      return "format " + json::serialize(value) + " at " + path + " is not supported";
    }
    const bool named = key == "properties" || key == "$defs" || key == "definitions" ||
                       key == "patternProperties";
    const bool subschemas = named || key == "items" || key == "prefixItems" ||
                            key == "anyOf" || key == "oneOf" || key == "allOf" ||
                            key == "propertyNames" ||
                            ((key == "additionalProperties" || key == "unevaluatedProperties" ||
                              key == "unevaluatedItems") && value.is_object());
    if (subschemas) {
      if (auto why = check_each(value, at(path, key), named); !why.empty()) return why;
    }
  }
  return "";
}

}  // namespace

std::string unsupported_schema_keywords(const std::string& schema_json) {
  boost::system::error_code error;
  const json::value schema = json::parse(schema_json, error);
  if (error) return "the schema is not valid JSON: " + error.message();
  return check(schema, "#");
}

}  // namespace lpx::grammar
