// A model file opened through a model_format plugin: typed metadata lookups and tensor views.
//
// Metadata keys follow GGUF's naming (see lpx/kinds/model_format.h). Read-only after open; any
// thread may read. Tensor views point into the plugin's mapping and live as long as this object.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lpx/kinds/model_format.h"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// The model_format plugin that recognises `path` (a file, or a directory such as a Hugging Face
// model) best: the highest probe score among the registry's model_format plugins. Errors name
// the path and the formats installed.
Expected<std::shared_ptr<PluginInstance>> detect_model_format(const std::string& path,
                                                              PluginRegistry& registry);

class ModelFile {
 public:
  // Opens `path` with the model_format plugin that recognises it best (highest probe score among
  // the registry's model_format plugins). Errors start with the path.
  static Expected<std::unique_ptr<ModelFile>> open(const std::string& path,
                                                   PluginRegistry& registry);
  // Opens `path` with a given model_format instance.
  static Expected<std::unique_ptr<ModelFile>> open_with(std::shared_ptr<PluginInstance> format,
                                                        const std::string& path);
  ~ModelFile();
  ModelFile(const ModelFile&) = delete;
  ModelFile& operator=(const ModelFile&) = delete;

  const std::string& path() const noexcept { return path_; }
  // The plugin that read the file, e.g. "gguf".
  const std::string& format_name() const noexcept;

  // --- metadata ---
  std::optional<lpx_metadata_value> find(const std::string& key) const;
  bool has(const std::string& key) const { return find(key).has_value(); }
  // Typed reads: an error names the key and what was found instead.
  Expected<std::string> get_string(const std::string& key) const;
  Expected<std::uint64_t> get_uint(const std::string& key) const;  // accepts non-negative INT too
  Expected<double> get_float(const std::string& key) const;        // accepts integers too
  Expected<bool> get_bool(const std::string& key) const;
  // An array: its element type and length.
  Expected<lpx_metadata_value> get_array(const std::string& key) const;
  Expected<lpx_metadata_value> array_element(const std::string& key, std::uint64_t index) const;

  // Every metadata key in the file's order; an error when the format plugin cannot list them
  // (it predates ABI 2.6, or chose not to).
  Expected<std::vector<std::string>> metadata_keys() const;

  // --- tensors ---
  const std::vector<lpx_tensor_view>& tensors() const noexcept { return tensors_; }
  const lpx_tensor_view* find_tensor(const std::string& name) const;
  // Replaces tensor `index`'s data with `bytes` of `type` (same shape), which the file then owns:
  // how a model is quantized as it loads. Not thread-safe: before the model is shared.
  void replace_tensor(std::size_t index, lpx_tensor_type type, std::vector<std::uint8_t> bytes);

 private:
  ModelFile() = default;

  std::string path_;
  std::shared_ptr<PluginInstance> format_;
  const lpx_model_format_api* api_ = nullptr;
  lpx_model* model_ = nullptr;
  std::vector<lpx_tensor_view> tensors_;
  std::unordered_map<std::string, std::size_t> tensor_index_;
  std::unordered_map<std::size_t, std::vector<std::uint8_t>> replaced_;  // by tensor index
};

// "uint", "int", "float", "bool", "string", "array".
const char* metadata_type_name(std::int32_t type);

}  // namespace lpx::core
