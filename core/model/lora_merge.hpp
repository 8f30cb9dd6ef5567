// A LoRA adapter merged into the model's weights as it loads ([model] lora, --lora):
//   W' = W + s * B * A
// computed in f32 and written in W's type. W must be F32, F16 or BF16: merging into quantized
// weights would quantize them twice (merge into the float model, then quantize; or serve the
// adapter per request, resident_adapter.hpp, which works beside quantized weights).
#pragma once

#include <cstdint>

#include "model/lora_adapter.hpp"

namespace lpx::core {

struct LoraSummary {
  std::size_t tensors = 0;  // weights changed
  std::uint32_t rank = 0;   // the largest rank among them
  float alpha = 0;
};

// Reads the adapter at spec.path, checks it against `model` (LoraAdapter::open, and every
// adapted weight's type) and merges it. Nothing is changed unless all of it checks.
Expected<LoraSummary> merge_lora(ModelFile& model, const LoraSpec& spec, PluginRegistry& registry,
                                 unsigned threads = 0);

}  // namespace lpx::core
