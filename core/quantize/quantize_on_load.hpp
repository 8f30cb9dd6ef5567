// [model] quantize = "Q4_K_M" (and --quantize): a model's F32/F16/BF16 tensors quantized in
// memory as it loads, each to the type `quantize` and llama-quantize would give it
// (quantization_plan.hpp), so that a Hugging Face directory or an F16 GGUF runs at a quantized
// model's size and speed without a conversion step. The bytes equal those `convert --type`
// writes. Tensors quantized already are refused rather than quantized twice.
#pragma once

#include <cstdint>

#include "model/model_file.hpp"
#include "quantize/quantization_plan.hpp"
#include "quantize/quantize_model.hpp"

namespace lpx::core {

Expected<QuantizeSummary> quantize_on_load(ModelFile& model, QuantMix mix, unsigned threads = 0);

// What the model's tensors will take once quantized to `mix` (a memory budget's estimate).
Expected<std::uint64_t> quantized_tensor_bytes(const ModelFile& model, QuantMix mix);

}  // namespace lpx::core
