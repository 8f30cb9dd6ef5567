#include "metadata_table.hpp"

namespace lpx::safetensors {

void MetadataTable::set_uint(const std::string& key, std::uint64_t value) {
  Value v;
  v.type = LPX_VALUE_UINT;
  v.u = value;
  values_[key] = std::move(v);
}

void MetadataTable::set_float(const std::string& key, double value) {
  Value v;
  v.type = LPX_VALUE_FLOAT;
  v.f = value;
  values_[key] = std::move(v);
}

void MetadataTable::set_bool(const std::string& key, bool value) {
  Value v;
  v.type = LPX_VALUE_BOOL;
  v.u = value ? 1 : 0;
  values_[key] = std::move(v);
}

void MetadataTable::set_string(const std::string& key, std::string value) {
  Value v;
  v.type = LPX_VALUE_STRING;
  v.string = std::move(value);
  values_[key] = std::move(v);
}

void MetadataTable::set_strings(const std::string& key, std::vector<std::string> values) {
  Value v;
  v.type = LPX_VALUE_ARRAY;
  v.element_type = LPX_VALUE_STRING;
  v.strings = std::move(values);
  values_[key] = std::move(v);
}

void MetadataTable::set_floats(const std::string& key, std::vector<double> values) {
  Value v;
  v.type = LPX_VALUE_ARRAY;
  v.element_type = LPX_VALUE_FLOAT;
  v.floats = std::move(values);
  values_[key] = std::move(v);
}

void MetadataTable::set_ints(const std::string& key, std::vector<std::int64_t> values) {
  Value v;
  v.type = LPX_VALUE_ARRAY;
  v.element_type = LPX_VALUE_INT;
  v.ints = std::move(values);
  values_[key] = std::move(v);
}

std::vector<const char*> MetadataTable::keys() const {
  std::vector<const char*> out;
  out.reserve(values_.size());
  for (const auto& entry : values_) out.push_back(entry.first.c_str());
  return out;
}

std::optional<lpx_metadata_value> MetadataTable::find(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const Value& v = it->second;
  lpx_metadata_value out{};
  out.type = v.type;
  out.u = v.u;
  out.f = v.f;
  if (v.type == LPX_VALUE_STRING) {
    out.string = v.string.data();
    out.length = v.string.size();
  } else if (v.type == LPX_VALUE_ARRAY) {
    out.element_type = v.element_type;
    out.length = v.element_type == LPX_VALUE_STRING  ? v.strings.size()
                 : v.element_type == LPX_VALUE_FLOAT ? v.floats.size()
                                                     : v.ints.size();
  }
  return out;
}

std::optional<lpx_metadata_value> MetadataTable::element(const std::string& key,
                                                         std::uint64_t index) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.type != LPX_VALUE_ARRAY) return std::nullopt;
  const Value& v = it->second;
  lpx_metadata_value out{};
  out.type = v.element_type;
  if (v.element_type == LPX_VALUE_STRING) {
    if (index >= v.strings.size()) return std::nullopt;
    out.string = v.strings[index].data();
    out.length = v.strings[index].size();
  } else if (v.element_type == LPX_VALUE_FLOAT) {
    if (index >= v.floats.size()) return std::nullopt;
    out.f = v.floats[index];
  } else {
    if (index >= v.ints.size()) return std::nullopt;
    out.i = v.ints[index];
  }
  return out;
}

}  // namespace lpx::safetensors
