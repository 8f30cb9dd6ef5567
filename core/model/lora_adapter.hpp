// LoRA adapters in llama.cpp's GGUF format (general.type = "adapter", adapter.type = "lora",
// adapter.lora.alpha; for each adapted weight W, tensors "W.lora_a" [in, r] and "W.lora_b"
// [r, out] in GGUF's dimension order), merged into a model's weights when it loads:
//   W' = W + s * B * A,   s = scale * alpha / r   (scale when alpha is 0),
// which is what llama.cpp's `--lora FILE` (scale 1) or `--lora-scaled FILE SCALE` adds at run
// time. The merge runs in f32 and writes W' in W's type; W must be F32, F16 or BF16 (merging into
// quantized weights would quantize them twice: merge into the float model, then quantize).
#pragma once

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

struct LoraSummary {
  std::size_t tensors = 0;  // weights changed
  std::uint32_t rank = 0;   // the largest rank among them
  float alpha = 0;
};

// Reads the adapter at spec.path, checks it against `model` (architecture, every adapted
// tensor's presence, shape and type) and merges it. Nothing is changed unless all of it checks.
Expected<LoraSummary> merge_lora(ModelFile& model, const LoraSpec& spec, PluginRegistry& registry,
                                 unsigned threads = 0);

}  // namespace lpx::core
