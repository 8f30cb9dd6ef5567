// The GGUF-named metadata a Hugging Face model directory maps onto (see lpx/kinds/model_format.h):
// an owned key -> value table whose lpx_metadata_value views live as long as the table.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <lpx/kinds/model_format.h>

namespace lpx::safetensors {

class MetadataTable {
 public:
  void set_uint(const std::string& key, std::uint64_t value);
  void set_float(const std::string& key, double value);
  void set_bool(const std::string& key, bool value);
  void set_string(const std::string& key, std::string value);
  void set_strings(const std::string& key, std::vector<std::string> values);
  void set_floats(const std::string& key, std::vector<double> values);
  void set_ints(const std::string& key, std::vector<std::int64_t> values);
  void erase(const std::string& key) { values_.erase(key); }

  bool has(const std::string& key) const { return values_.count(key) != 0; }
  std::optional<lpx_metadata_value> find(const std::string& key) const;
  // Element `index` of the array under `key`; nullopt when there is no such key or element.
  std::optional<lpx_metadata_value> element(const std::string& key, std::uint64_t index) const;
  std::size_t size() const noexcept { return values_.size(); }
  // Every key, sorted; the strings live as long as the table is not changed.
  std::vector<const char*> keys() const;

 private:
  struct Value {
    std::int32_t type = LPX_VALUE_UINT;
    std::uint64_t u = 0;
    double f = 0;
    std::string string;
    std::int32_t element_type = 0;  // ARRAY: which of the vectors below holds the elements
    std::vector<std::string> strings;
    std::vector<double> floats;
    std::vector<std::int64_t> ints;
  };
  std::map<std::string, Value> values_;
};

}  // namespace lpx::safetensors
