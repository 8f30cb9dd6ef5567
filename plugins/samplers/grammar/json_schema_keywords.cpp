#include "json_schema_keywords.hpp"

#include "exclusive_branches.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <cstdint>
#include <string_view>
#include <vector>

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
    "readOnly", "writeOnly", "contentMediaType", "contentEncoding",
    "discriminator"};  // OpenAPI's hint beside oneOf (pydantic); exclusivity is proven below
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

std::string check(const json::value& node, const std::string& path, const json::value& root,
                  bool of_keys = false);

std::string check_each(const json::value& value, const std::string& path, bool named,
                       const json::value& root) {
  if (named && value.is_object()) {
    for (const auto& [name, sub] : value.as_object()) {
      if (auto why = check(sub, at(path, name), root); !why.empty()) return why;
    }
  } else if (value.is_array()) {
    std::size_t i = 0;
    for (const json::value& sub : value.as_array()) {
      if (auto why = check(sub, path + "/" + std::to_string(i++), root); !why.empty()) return why;
    }
  } else {
    return check(value, path, root);
  }
  return "";
}

// Keywords that decide a schema alone in the conversion: beside one of them, the others at the
// same level would be dropped (JSON Schema applies them all), so they are refused.
constexpr std::array<std::string_view, 6> kDeciding = {"$ref", "const", "enum", "anyOf", "oneOf", "allOf"};
// Keywords that apply to one kind of value only: without a `type` the conversion would not know
// to apply them.
constexpr std::array<std::string_view, 9> kTypedOnly = {
    "minLength", "maxLength", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf"};
constexpr std::int64_t kMaxMultipleOf = 1024;  // the largest integer multipleOf it enforces
constexpr double kMaxMultipleOfRange = 10000;  // ... and the widest bounded range it holds it in

// Regular-expression constructs the conversion would pass over: lookaround assertions.
bool has_lookaround(std::string_view pattern) {
  for (std::string_view look : {"(?=", "(?!", "(?<=", "(?<!"}) {
    if (pattern.find(look) != std::string_view::npos) return true;
  }
  return false;
}

std::optional<double> number_of(const json::object& schema, std::string_view key) {
  const json::value* v = schema.if_contains(key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

// What the conversion would drop of this one schema object (not its subschemas), or "".
// `of_keys`: the schema describes property names (propertyNames), which are strings.
std::string check_combinations(const json::object& schema, const std::string& path, bool of_keys) {
  std::string_view deciding;
  for (std::string_view key : kDeciding) {
    if (schema.contains(key)) {
      deciding = key;
      break;
    }
  }
  for (const auto& [key_view, value] : schema) {
    const std::string_view key = key_view;
    const bool neutral = in(kAnnotations, key) || key == "$defs" || key == "definitions" ||
                         key == deciding ||
                         (key == "type" && (deciding == "const" || deciding == "enum"));
    if (!deciding.empty() && !neutral) {
      return "keyword '" + std::string(key) + "' beside '" + std::string(deciding) + "' at " +
             path + " is not supported (move it into the " + std::string(deciding) +
             (deciding == "$ref" ? " target" : " branches") + ")";
    }
  }
  if (deciding.empty() && !schema.contains("type") && !of_keys) {
    for (std::string_view key : kTypedOnly) {
      if (schema.contains(key)) {
        return "keyword '" + std::string(key) + "' at " + path + " needs a 'type'";
      }
    }
  }
  const bool length = schema.contains("minLength") || schema.contains("maxLength");
  for (std::string_view shaping : {std::string_view("pattern"), std::string_view("format")}) {
    if (length && schema.contains(shaping)) {
      return "minLength/maxLength together with '" + std::string(shaping) + "' at " + path +
             " is not supported";
    }
  }
  if (schema.contains("pattern") && schema.contains("format")) {
    return "'pattern' together with 'format' at " + path + " is not supported";
  }
  if (const json::value* p = schema.if_contains("pattern"); p != nullptr && p->is_string() &&
                                                          has_lookaround(p->as_string())) {
    return "pattern at " + path + " uses a lookaround assertion, which is not supported";
  }
  if (const json::value* pp = schema.if_contains("patternProperties"); pp != nullptr && pp->is_object()) {
    for (const auto& [key, sub] : pp->as_object()) {
      if (has_lookaround(key)) {
        return "patternProperties key at " + path + " uses a lookaround assertion, which is not supported";
      }
    }
  }
  if (const json::value* ref = schema.if_contains("$ref");
      ref != nullptr && (!ref->is_string() || !(ref->as_string() == "#" || ref->as_string().starts_with("#/")))) {
    return "$ref " + json::serialize(*ref) + " at " + path +
           " is not supported: only references within the schema (# or #/...)";
  }
  if (const json::value* m = schema.if_contains("multipleOf"); m != nullptr && !is_number_type(schema)) {
    const bool whole = (m->is_int64() && m->as_int64() > 0 && m->as_int64() <= kMaxMultipleOf) ||
                       (m->is_uint64() && m->as_uint64() <= kMaxMultipleOf);
    if (!whole) {
      return "multipleOf " + json::serialize(*m) + " at " + path +
             " is not supported: integers from 1 to " + std::to_string(kMaxMultipleOf);
    }
    // Held with no bounds, or within both bounds of a range at most kMaxMultipleOfRange wide.
    const auto low = number_of(schema, "minimum") ? number_of(schema, "minimum") : number_of(schema, "exclusiveMinimum");
    const auto high = number_of(schema, "maximum") ? number_of(schema, "maximum") : number_of(schema, "exclusiveMaximum");
    if ((low.has_value() != high.has_value()) || (low && high && *high - *low > kMaxMultipleOfRange)) {
      return "multipleOf at " + path + " is supported without bounds, or with both a lower and an "
             "upper bound at most " + std::to_string(static_cast<int>(kMaxMultipleOfRange)) + " apart";
    }
  }
  return "";
}

std::string check(const json::value& node, const std::string& path, const json::value& root,
                  bool of_keys) {
  if (node.is_bool()) return "";  // true: anything; false: nothing
  if (!node.is_object()) return "the schema at " + path + " is not an object";
  const json::object& schema = node.as_object();
  if (std::string why = check_combinations(schema, path, of_keys); !why.empty()) return why;
  for (const auto& [key_view, value] : schema) {
    const std::string_view key = key_view;
    if (in(kAnnotations, key)) continue;
    if (!in(kConstraints, key)) {
      return "keyword '" + std::string(key) + "' at " + path + " is not supported";
    }
    if (key == "multipleOf" && is_number_type(schema)) {
      return "keyword 'multipleOf' at " + path + " is supported for integers only";
    }
    if (key == "oneOf" && value.is_array() && !value.as_array().empty() &&
        !provably_exclusive(value.as_array(), root)) {
      return "oneOf at " + path + " has branches that are not provably exclusive (different "
             "types, or a required property with different const/enum values); use anyOf";
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
    if (key == "propertyNames") {
      if (auto why = check(value, at(path, key), root, /*of_keys=*/true); !why.empty()) return why;
    } else if (subschemas) {
      if (auto why = check_each(value, at(path, key), named, root); !why.empty()) return why;
    }
  }
  return "";
}

}  // namespace

std::string unsupported_schema_keywords(const std::string& schema_json) {
  boost::system::error_code error;
  const json::value schema = json::parse(schema_json, error);
  if (error) return "the schema is not valid JSON: " + error.message();
  return check(schema, "#", schema);
}

}  // namespace lpx::grammar
