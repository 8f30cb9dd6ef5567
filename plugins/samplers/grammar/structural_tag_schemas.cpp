#include "structural_tag_schemas.hpp"

#include <boost/json.hpp>

#include "json_schema_keywords.hpp"

namespace lpx::grammar {
namespace {

namespace json = boost::json;

// A format is a JSON Schema when its type says so, or (xgrammar infers types) when it has no
// type and holds a `json_schema`.
bool is_schema_format(const json::object& o) {
  const json::value* type = o.if_contains("type");
  const json::value* schema = o.if_contains("json_schema");
  return schema != nullptr && (type == nullptr || (type->is_string() && type->get_string() == "json_schema"));
}

std::string check(const json::value& v, const std::string& where) {
  if (const json::array* items = v.if_array()) {
    for (std::size_t i = 0; i < items->size(); ++i) {
      if (std::string why = check((*items)[i], where + "/" + std::to_string(i)); !why.empty()) return why;
    }
  } else if (const json::object* o = v.if_object()) {
    if (is_schema_format(*o)) {
      const std::string why = unsupported_schema_keywords(json::serialize(o->at("json_schema")));
      return why.empty() ? why : where + ": " + why;
    }
    for (const auto& [key, value] : *o) {
      if (std::string why = check(value, where + "/" + std::string(key)); !why.empty()) return why;
    }
  }
  return {};
}

}  // namespace

std::string unsupported_structural_tag_schemas(const std::string& structural_tag_json) {
  boost::system::error_code error;
  const json::value tag = json::parse(structural_tag_json, error);
  if (error) return "the structural tag is not valid JSON: " + error.message();
  return check(tag, "#");
}

}  // namespace lpx::grammar
