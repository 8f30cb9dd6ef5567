// LoRA adapters in llama.cpp's GGUF format (general.type = "adapter", adapter.type = "lora",
// adapter.lora.alpha; for each adapted weight W, tensors "W.lora_a" [in, r] and "W.lora_b"
// [r, out] in GGUF's dimension order). An adapter changes W's product with x to
//   W x + s * B (A x),   s = scale * alpha / r   (scale when alpha is 0),
// which is what llama.cpp's `--lora FILE` (scale 1) or `--lora-scaled FILE SCALE` adds at run
// time. LPX applies it two ways: merged into W as the model loads (lora_merge.hpp), or per
// request beside the unchanged weights (resident_adapter.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/model_file.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace lpx::core {

// `[model] lora` / `--lora`: "FILE" or "FILE@SCALE".
struct LoraSpec {
  std::string path;
  float scale = 1.0f;
};
Expected<LoraSpec> parse_lora_spec(const std::string& text);

// A whole 2-D tensor of any type LPX reads as f32 rows (row-major, dims[1] rows of dims[0]).
Expected<std::vector<float>> tensor_f32(const lpx_tensor_view& t);

// One adapted weight of the model.
struct LoraPair {
  std::string weight;             // W's tensor name in the model
  const lpx_tensor_view* a = nullptr;  // [in, r]: r rows of W's input width; in the adapter file
  const lpx_tensor_view* b = nullptr;  // [r, out]: out rows of r
  std::uint32_t rank = 0;
  float scale = 0;                // s
};

// An adapter file opened and checked against a model: its architecture, and for every adapted
// weight its presence in the model, both halves, and their shapes. The pairs' views point into
// the adapter's file, which this object keeps open (moving it keeps them valid).
class LoraAdapter {
 public:
  static Expected<LoraAdapter> open(const LoraSpec& spec, const ModelFile& model, PluginRegistry& registry);

  const std::string& path() const noexcept { return path_; }
  const std::vector<LoraPair>& pairs() const noexcept { return pairs_; }
  float alpha() const noexcept { return alpha_; }
  std::uint32_t rank() const noexcept;  // the largest among the pairs
  std::uint64_t bytes() const noexcept;  // of every A and B

 private:
  std::unique_ptr<ModelFile> file_;
  std::string path_;
  std::vector<LoraPair> pairs_;
  float alpha_ = 0;
};

}  // namespace lpx::core
