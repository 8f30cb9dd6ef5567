// `lpx-pipeline convert MODEL -o OUT.gguf [--type TYPE]`: any model LPX opens (a Hugging Face
// directory, a GGUF file) written as one GGUF file: every metadata key its format plugin lists,
// as GGUF types (unsigned counts as u32, floats as f32, token types as i32), and its tensors as
// they are or quantized to TYPE with the types llama-quantize would give them
// (quantization_plan.hpp). The file opens, runs and quantizes like any GGUF.
//
// Streams tensor by tensor, a few MiB at a time; writes OUT.partial and renames it when complete.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "model/model_file.hpp"
#include "quantize/quantization_plan.hpp"
#include "quantize/quantize_model.hpp"

namespace lpx::core {

struct ConvertOptions {
  std::optional<QuantMix> mix;  // none: every tensor keeps its type
  bool pure = false;
  unsigned threads = 0;
  std::function<void(const QuantizeProgress&)> on_progress;
  const std::atomic<bool>* stop = nullptr;  // see QuantizeOptions::stop
};

Expected<QuantizeSummary> convert_model(const ModelFile& model, const std::string& output,
                                        const ConvertOptions& options);

}  // namespace lpx::core
