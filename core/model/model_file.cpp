#include "model/model_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <spdlog/spdlog.h>

namespace lpx::core {
namespace {

constexpr std::size_t kProbeBytes = 4096;

std::vector<std::uint8_t> read_head(const std::string& path) {
  std::vector<std::uint8_t> head(kProbeBytes);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head;
}

// A model_format instance with default options.
Expected<std::shared_ptr<PluginInstance>> create_default(PluginLibrary& plugin) {
  ResolvedOptions options;
  options.specs = plugin.description().options;
  for (const OptionSpec& spec : options.specs) {
    if (spec.required) {
      return invalid_argument("plugin '" + plugin.description().name + "' needs option '" + spec.name +
                        "' and cannot probe files on its own");
    }
    if (spec.default_value) options.values.emplace(spec.name, *spec.default_value);
  }
  return plugin.create(options);
}

}  // namespace

const char* metadata_type_name(std::int32_t type) {
  switch (type) {
    case LPX_VALUE_UINT: return "uint";
    case LPX_VALUE_INT: return "int";
    case LPX_VALUE_FLOAT: return "float";
    case LPX_VALUE_BOOL: return "bool";
    case LPX_VALUE_STRING: return "string";
    case LPX_VALUE_ARRAY: return "array";
  }
  return "unknown";
}

Expected<std::shared_ptr<PluginInstance>> detect_model_format(const std::string& path,
                                                              PluginRegistry& registry) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return not_found(path + ": no such file");
  // A directory (a Hugging Face model) has no first bytes: only probe_path can claim it.
  const bool directory = std::filesystem::is_directory(path, error);
  const std::vector<std::uint8_t> head = directory ? std::vector<std::uint8_t>{} : read_head(path);
  std::shared_ptr<PluginInstance> best;
  std::int32_t best_score = 0;
  std::vector<std::string> formats;
  for (const PluginCandidate& candidate : registry.candidates()) {
    auto plugin = registry.load(candidate.name);
    if (!plugin || plugin.value()->description().kind != LPX_KIND_MODEL_FORMAT) continue;
    formats.push_back(candidate.name);
    auto instance = create_default(**plugin);
    if (!instance) continue;
    const auto& api = instance.value()->api<lpx_model_format_api>();
    std::int32_t score = directory ? 0 : api.probe(instance.value()->raw(), head.data(), head.size());
    if (api.probe_path != nullptr) {
      score = std::max(score, api.probe_path(instance.value()->raw(), path.c_str()));
    }
    if (score > best_score) {
      best_score = score;
      best = *instance;
    }
  }
  if (!best) {
    std::string known;
    for (const std::string& f : formats) known += (known.empty() ? "" : ", ") + f;
    return invalid_argument(path + (directory ? ": not a model directory" : ": not a model file") +
                            " any format plugin recognises (formats: " +
                      (known.empty() ? "none installed" : known) + ")");
  }
  return best;
}

Expected<std::unique_ptr<ModelFile>> ModelFile::open(const std::string& path,
                                                     PluginRegistry& registry) {
  auto format = detect_model_format(path, registry);
  if (!format) return unexpected(format.error());
  return open_with(std::move(*format), path);
}

Expected<std::unique_ptr<ModelFile>> ModelFile::open_with(std::shared_ptr<PluginInstance> format,
                                                          const std::string& path) {
  std::unique_ptr<ModelFile> file(new ModelFile());
  file->path_ = path;
  file->format_ = std::move(format);
  file->api_ = &file->format_->api<lpx_model_format_api>();
  lpx_model* model = nullptr;
  if (lpx_status* status = file->api_->open(file->format_->raw(), path.c_str(), &model)) {
    return unexpected(take_status(status).with_context(path));
  }
  file->model_ = model;
  const std::uint64_t count = file->api_->tensor_count(model);
  file->tensors_.reserve(count);
  for (std::uint64_t k = 0; k < count; ++k) {
    lpx_tensor_view view{};
    if (lpx_status* status = file->api_->tensor_at(model, k, &view)) {
      return unexpected(take_status(status).with_context(path + ": tensor " + std::to_string(k)));
    }
    file->tensor_index_.emplace(view.name, file->tensors_.size());
    file->tensors_.push_back(view);
  }
  return file;
}

ModelFile::~ModelFile() {
  if (model_ != nullptr) api_->close(model_);
}

const std::string& ModelFile::format_name() const noexcept {
  return format_->library().description().name;
}

std::optional<lpx_metadata_value> ModelFile::find(const std::string& key) const {
  lpx_metadata_value value{};
  lpx_status* status = api_->metadata_find(model_, key.c_str(), &value);
  if (status == nullptr) return value;
  const bool absent = status->code == LPX_ERR_NOT_FOUND;
  const std::string message = take_status_message(status);
  if (!absent) spdlog::warn("{}: metadata '{}' cannot be read: {}", path_, key, message);
  return std::nullopt;
}

namespace {
std::string wrong_type(const std::string& key, const char* wanted, std::int32_t found) {
  return "metadata '" + key + "' should be " + wanted + ", found " + metadata_type_name(found);
}
}  // namespace

Expected<std::string> ModelFile::get_string(const std::string& key) const {
  auto value = find(key);
  if (!value) return invalid_argument("missing metadata '" + key + "'");
  if (value->type != LPX_VALUE_STRING) return invalid_argument(wrong_type(key, "a string", value->type));
  return std::string(value->string, value->length);
}

Expected<std::uint64_t> ModelFile::get_uint(const std::string& key) const {
  auto value = find(key);
  if (!value) return invalid_argument("missing metadata '" + key + "'");
  if (value->type == LPX_VALUE_UINT) return value->u;
  if (value->type == LPX_VALUE_INT && value->i >= 0) return static_cast<std::uint64_t>(value->i);
  return invalid_argument(wrong_type(key, "a non-negative integer", value->type));
}

Expected<double> ModelFile::get_float(const std::string& key) const {
  auto value = find(key);
  if (!value) return invalid_argument("missing metadata '" + key + "'");
  if (value->type == LPX_VALUE_FLOAT) return value->f;
  if (value->type == LPX_VALUE_UINT) return static_cast<double>(value->u);
  if (value->type == LPX_VALUE_INT) return static_cast<double>(value->i);
  return invalid_argument(wrong_type(key, "a number", value->type));
}

Expected<bool> ModelFile::get_bool(const std::string& key) const {
  auto value = find(key);
  if (!value) return invalid_argument("missing metadata '" + key + "'");
  if (value->type != LPX_VALUE_BOOL) return invalid_argument(wrong_type(key, "a bool", value->type));
  return value->u != 0;
}

Expected<lpx_metadata_value> ModelFile::get_array(const std::string& key) const {
  auto value = find(key);
  if (!value) return invalid_argument("missing metadata '" + key + "'");
  if (value->type != LPX_VALUE_ARRAY) return invalid_argument(wrong_type(key, "an array", value->type));
  return *value;
}

Expected<lpx_metadata_value> ModelFile::array_element(const std::string& key,
                                                      std::uint64_t index) const {
  lpx_metadata_value value{};
  if (lpx_status* status = api_->metadata_array_at(model_, key.c_str(), index, &value)) {
    return unexpected(take_status(status));
  }
  return value;
}

Expected<std::vector<std::string>> ModelFile::metadata_keys() const {
  if (api_->metadata_count == nullptr || api_->metadata_key_at == nullptr) {
    return unsupported(path_ + ": the '" + format_name() + "' plugin cannot list its metadata");
  }
  std::vector<std::string> keys;
  const std::uint64_t count = api_->metadata_count(model_);
  for (std::uint64_t k = 0; k < count; ++k) {
    const char* key = nullptr;
    if (lpx_status* status = api_->metadata_key_at(model_, k, &key)) {
      return unexpected(take_status(status).with_context(path_));
    }
    keys.emplace_back(key);
  }
  return keys;
}

void ModelFile::replace_tensor(std::size_t index, lpx_tensor_type type, std::vector<std::uint8_t> bytes) {
  lpx_tensor_view& view = tensors_.at(index);
  std::vector<std::uint8_t>& slot = replaced_[index];  // a second replacement frees the first
  slot = std::move(bytes);
  view.type = type;
  view.data = slot.data();
  view.size_bytes = slot.size();
}

const lpx_tensor_view* ModelFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace lpx::core
