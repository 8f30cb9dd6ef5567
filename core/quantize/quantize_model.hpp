// `lpx-pipeline quantize IN.gguf OUT.gguf --type TYPE`: a GGUF model rewritten with its tensors
// quantized, byte for byte the file `llama-quantize IN OUT TYPE` writes: every metadata entry
// copied as it is (general.quantization_version and general.file_type set, moved to the end, and
// split keys dropped, as llama-quantize does), the tensors in its order with the types
// plan_quantization picks, each converted through f32 by the reference kernels.
//
// Streams: one slab of rows at a time (memory stays bounded whatever the model's size), the rows
// of a slab split across threads (the bytes do not depend on the thread count). Writes OUT.partial
// and renames it when complete, so an interrupted run leaves no half file under OUT's name.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "quantize/quantization_plan.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct QuantizeProgress {
  std::size_t tensor = 0, tensors = 0;  // the tensor being written (1-based) of how many
  const std::string* name = nullptr;
  lpx_tensor_type from = LPX_TENSOR_F32, to = LPX_TENSOR_F32;
  std::uint64_t bytes_done = 0, bytes_total = 0;  // of the output's tensor data
};

struct QuantizeOptions {
  QuantMix mix = QuantMix::Q4_K_M;
  bool pure = false;              // every quantizable tensor in the mix's base type
  bool allow_requantize = false;  // convert tensors that are quantized already (loses quality)
  unsigned threads = 0;           // 0: every core
  std::function<void(const QuantizeProgress&)> on_progress;  // after each slab
  // Set from another thread (Ctrl-C) to stop after the current slab: LPX_ERR_CANCELLED, and
  // the partial output removed.
  const std::atomic<bool>* stop = nullptr;
};

struct QuantizeSummary {
  std::uint64_t input_bytes = 0, output_bytes = 0;
  std::size_t tensors = 0, converted = 0;
};

Expected<QuantizeSummary> quantize_model(const std::string& input, const std::string& output,
                                         const QuantizeOptions& options);

}  // namespace lpx::core
