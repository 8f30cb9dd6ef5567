#include "exclusive_branches.hpp"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::grammar {
namespace {

namespace json = boost::json;

// The schema a local reference ("#" or "#/a/b") points at, or null.
const json::value* resolve(const json::value& node, const json::value& root) {
  const json::object* o = node.if_object();
  const json::value* ref = o ? o->if_contains("$ref") : nullptr;
  if (ref == nullptr) return &node;
  if (!ref->is_string()) return nullptr;
  std::string_view pointer = ref->as_string();
  if (pointer == "#") return &root;
  if (!pointer.starts_with("#/")) return nullptr;
  boost::system::error_code error;
  const json::value* target = root.find_pointer(pointer.substr(1), error);
  return error ? nullptr : target;
}

}  // namespace

bool provably_exclusive(const json::array& branches, const json::value& root) {
  std::vector<const json::object*> resolved;
  for (const json::value& b : branches) {
    const json::value* r = resolve(b, root);
    if (r == nullptr || !r->is_object()) return false;
    resolved.push_back(&r->as_object());
  }
  std::vector<std::string> types;
  for (const json::object* b : resolved) {
    const json::value* type = b->if_contains("type");
    if (type == nullptr || !type->is_string()) {
      types.clear();
      break;
    }
    std::string t(type->as_string());
    if (t == "integer") t = "number";
    if (std::find(types.begin(), types.end(), t) != types.end()) {
      types.clear();
      break;
    }
    types.push_back(t);
  }
  if (types.size() == resolved.size()) return true;
  // A discriminating property: required by every branch, with disjoint constant values.
  const json::value* first_required = resolved.front()->if_contains("required");
  if (first_required == nullptr || !first_required->is_array()) return false;
  for (const json::value& name_value : first_required->as_array()) {
    if (!name_value.is_string()) continue;
    const std::string_view name = name_value.as_string();
    std::vector<std::string> seen;
    bool discriminates = true;
    for (const json::object* b : resolved) {
      const json::value* required = b->if_contains("required");
      const json::value* props = b->if_contains("properties");
      const json::value* prop = props && props->is_object() ? props->as_object().if_contains(name) : nullptr;
      bool is_required = false;
      if (required && required->is_array()) {
        for (const json::value& r : required->as_array()) is_required |= r.is_string() && r.as_string() == name;
      }
      const json::value* p = prop ? resolve(*prop, root) : nullptr;
      const json::object* po = p ? p->if_object() : nullptr;
      std::vector<std::string> values;
      if (po && po->contains("const")) values.push_back(json::serialize(po->at("const")));
      if (po && po->contains("enum") && po->at("enum").is_array()) {
        for (const json::value& v : po->at("enum").as_array()) values.push_back(json::serialize(v));
      }
      if (!is_required || values.empty()) {
        discriminates = false;
        break;
      }
      for (const std::string& v : values) {
        if (std::find(seen.begin(), seen.end(), v) != seen.end()) discriminates = false;
        seen.push_back(v);
      }
      if (!discriminates) break;
    }
    if (discriminates) return true;
  }
  return false;
}

// Each subschema of `value`: one schema, an array of them, or an object of named ones.

}  // namespace lpx::grammar
