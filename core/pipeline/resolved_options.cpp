#include "pipeline/resolved_options.hpp"

#include <algorithm>

#include "lpx/cpp/status.hpp"
#include "util/did_you_mean.hpp"

namespace lpx::core {

ResolvedOptions default_options(const std::vector<OptionSpec>& specs) {
  ResolvedOptions options;
  options.specs = specs;
  for (const OptionSpec& spec : specs) {
    if (spec.default_value) options.values[spec.name] = *spec.default_value;
  }
  return options;
}

ResolvedOptions resolve_options(const PipelineDocument& document, const toml::table& table,
                                const std::string& section, const std::vector<OptionSpec>& specs,
                                const std::vector<std::string>& reserved,
                                Diagnostics& diagnostics) {
  ResolvedOptions resolved;
  resolved.specs = specs;
  std::vector<std::string> known = reserved;
  for (const OptionSpec& spec : specs) known.push_back(spec.name);

  for (const auto& [key, node] : table) {
    const std::string name(key.str());
    const std::string key_path = section + "." + name;
    if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) continue;
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const OptionSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      diagnostics.error(document.where_key(key, key_path),
                        "unknown key '" + name + "' in [" + section + "]" +
                            did_you_mean(name, known) + "; known keys: " + join_or_none(known));
      continue;
    }
    auto value = convert_option(node, *spec);
    if (!value) {
      diagnostics.error(document.where(node, key_path), "'" + key_path + "': " + value.error().message);
      continue;
    }
    resolved.values.emplace(name, std::move(*value));
  }

  for (const OptionSpec& spec : specs) {
    if (resolved.values.count(spec.name) != 0) continue;
    if (spec.default_value) {
      resolved.values.emplace(spec.name, *spec.default_value);
    } else if (spec.required && table.get(spec.name) == nullptr) {
      diagnostics.error(document.where_table(table, section),
                        "[" + section + "] is missing required key '" + spec.name + "' (" +
                            type_name(spec.type) + ": " + spec.description + ")");
    }
  }
  return resolved;
}

namespace option_access {
namespace {

std::string quoted(const char* name) { return std::string("option '") + name + "'"; }

// The stored value of `name`, or a status saying why there is none.
lpx_status* find_value(const lpx_options* options, const char* name,
                       const OptionValue** out) noexcept {
  if (options == nullptr || name == nullptr) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "options or name is NULL");
  }
  auto spec = std::find_if(options->specs.begin(), options->specs.end(),
                           [&](const OptionSpec& s) { return s.name == name; });
  if (spec == options->specs.end()) {
    return make_status(LPX_ERR_NOT_FOUND, (quoted(name) + " is not declared by the plugin").c_str());
  }
  auto it = options->values.find(std::string_view(name));
  if (it == options->values.end()) {
    return make_status(LPX_ERR_NOT_FOUND, (quoted(name) + " is not set and has no default").c_str());
  }
  *out = &it->second;
  return nullptr;
}

lpx_status* wrong_type(const char* name) noexcept {
  return make_status(LPX_ERR_INVALID_ARGUMENT,
                     (quoted(name) + " was read as a type other than the one declared").c_str());
}

// The stored value of `name` as type T, or a status saying why not.
template <class T>
lpx_status* find(const lpx_options* options, const char* name, const T** out) noexcept {
  const OptionValue* value = nullptr;
  if (lpx_status* s = find_value(options, name, &value)) return s;
  const T* typed = std::get_if<T>(value);
  if (typed == nullptr) return wrong_type(name);
  *out = typed;
  return nullptr;
}

template <class T>
lpx_status* list_item(const lpx_options* options, const char* name, size_t index,
                      const T** out) noexcept {
  const std::vector<T>* list = nullptr;
  if (lpx_status* s = find(options, name, &list)) return s;
  if (index >= list->size()) {
    return make_status(LPX_ERR_INVALID_ARGUMENT,
                       (quoted(name) + " has no item " + std::to_string(index)).c_str());
  }
  *out = &(*list)[index];
  return nullptr;
}

}  // namespace

int32_t is_set(const lpx_options* options, const char* name) noexcept {
  return options != nullptr && name != nullptr &&
         options->values.find(std::string_view(name)) != options->values.end();
}

lpx_status* get_string(const lpx_options* options, const char* name, const char** out,
                       size_t* out_length) noexcept {
  const std::string* value = nullptr;
  if (lpx_status* s = find(options, name, &value)) return s;
  *out = value->c_str();
  *out_length = value->size();
  return nullptr;
}

lpx_status* get_int(const lpx_options* options, const char* name, int64_t* out) noexcept {
  const std::int64_t* value = nullptr;
  if (lpx_status* s = find(options, name, &value)) return s;
  *out = *value;
  return nullptr;
}

lpx_status* get_float(const lpx_options* options, const char* name, double* out) noexcept {
  const double* value = nullptr;
  if (lpx_status* s = find(options, name, &value)) return s;
  *out = *value;
  return nullptr;
}

lpx_status* get_bool(const lpx_options* options, const char* name, int32_t* out) noexcept {
  const bool* value = nullptr;
  if (lpx_status* s = find(options, name, &value)) return s;
  *out = *value ? 1 : 0;
  return nullptr;
}

lpx_status* list_size(const lpx_options* options, const char* name, size_t* out) noexcept {
  const OptionValue* value = nullptr;
  if (lpx_status* s = find_value(options, name, &value)) return s;
  if (const auto* strings = std::get_if<std::vector<std::string>>(value)) {
    *out = strings->size();
  } else if (const auto* ints = std::get_if<std::vector<std::int64_t>>(value)) {
    *out = ints->size();
  } else {
    return wrong_type(name);
  }
  return nullptr;
}

lpx_status* list_string(const lpx_options* options, const char* name, size_t index,
                        const char** out, size_t* out_length) noexcept {
  const std::string* item = nullptr;
  if (lpx_status* s = list_item(options, name, index, &item)) return s;
  *out = item->c_str();
  *out_length = item->size();
  return nullptr;
}

lpx_status* list_int(const lpx_options* options, const char* name, size_t index,
                     int64_t* out) noexcept {
  const std::int64_t* item = nullptr;
  if (lpx_status* s = list_item(options, name, index, &item)) return s;
  *out = *item;
  return nullptr;
}

}  // namespace option_access
}  // namespace lpx::core
