// safetensors: the model-format plugin for Hugging Face model directories (config.json,
// *.safetensors weights, tokenizer.json), presented with GGUF's metadata keys and tensor names
// so that the core runs them as it runs GGUF files. See hf_model_dir.hpp.
#include <lpx/cpp/plugin.hpp>

#include "hf_model_dir.hpp"

namespace {

using lpx::safetensors::HfModelDir;

class SafetensorsModel final : public lpx::Model {
 public:
  explicit SafetensorsModel(std::unique_ptr<HfModelDir> dir)
      : dir_(std::move(dir)), keys_(dir_->metadata().keys()) {}

  const std::vector<const char*>& metadata_keys() const override { return keys_; }

  std::optional<lpx_metadata_value> find(const char* key) const override {
    return dir_->metadata().find(key);
  }

  lpx_metadata_value array_element(const char* key, std::uint64_t index) const override {
    auto element = dir_->metadata().element(key, index);
    if (!element) {
      throw lpx::Error(dir_->metadata().has(key) ? LPX_ERR_INVALID_ARGUMENT : LPX_ERR_NOT_FOUND,
                       std::string("metadata '") + key + "' has no element " + std::to_string(index));
    }
    return *element;
  }

  std::uint64_t tensor_count() const noexcept override { return dir_->tensors().size(); }

  lpx_tensor_view tensor(std::uint64_t index) const override {
    if (index >= dir_->tensors().size()) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "no tensor " + std::to_string(index));
    }
    return dir_->tensors()[index];
  }

 private:
  std::unique_ptr<HfModelDir> dir_;
  std::vector<const char*> keys_;
};

class SafetensorsFormat final : public lpx::ModelFormat {
 public:
  explicit SafetensorsFormat(const lpx::Options&) {}

  // A lone .safetensors file starts with its header's length, then '{': but without the
  // config.json beside it there is no model, so only paths are recognised.
  std::int32_t probe(const std::uint8_t*, std::size_t) const noexcept override { return 0; }

  std::int32_t probe_path(const char* path) const noexcept override {
    try {
      return lpx::safetensors::looks_like_hf_model(path) ? 90 : 0;
    } catch (...) {
      return 0;
    }
  }

  std::unique_ptr<lpx::Model> open(const char* path) override {
    auto dir = HfModelDir::open(path);
    if (!dir) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, dir.error());
    return std::make_unique<SafetensorsModel>(std::move(*dir));
  }
};

constexpr const char* kCapabilities[] = {"format:safetensors", "format:hf-directory"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<SafetensorsFormat>(
      {.name = "safetensors",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "Hugging Face model directories: config.json, safetensors weights (sharded "
                      "or not), tokenizer.json",
       .options = {},
       .capabilities = kCapabilities});
}
