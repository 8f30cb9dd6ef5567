// Which type each tensor of a model gets when it is quantized to a named type, exactly as
// llama-quantize decides (so that `lpx-pipeline quantize IN OUT TYPE` writes the file
// `llama-quantize IN OUT TYPE` writes): the same type names and aliases (Q4_K is Q4_K_M, Q5_K is
// Q5_K_M), the same tensors left alone (norms, 1-D tensors, ...), the output matrix (or the tied
// token embedding) in Q6_K, the K-quant mixes' extra bits for some attn_v and ffn_down layers,
// the fallbacks for rows that do not fill a block, and the same tensor order in the output
// (by layer, then by name). Pinned by tests/fixtures/quantize/types-*.json.
//
// Not covered: importance matrices, the 2- and 3-bit and IQ types, mixture-of-experts and
// 70B-specific rules (no model in LPX's range has them).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lpx/kinds/tensor.h"

namespace lpx::core {

// A named target as llama-quantize takes it (its ftype).
enum class QuantMix { F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K_S, Q4_K_M, Q5_K_S, Q5_K_M, Q6_K };

// "Q4_K_M", "q4_k", "Q5_K"...; nullopt for a name it does not know.
std::optional<QuantMix> parse_quant_mix(std::string_view name);
std::string_view quant_mix_name(QuantMix mix);
// The names parse_quant_mix takes, for messages.
std::string quant_mix_names();
// The same as a list (the canonical names, then the aliases Q4_K and Q5_K), for option choices.
std::vector<std::string> quant_mix_choices();
// general.file_type of the output (llama.cpp's llama_ftype number).
std::uint32_t quant_mix_file_type(QuantMix mix);

struct TensorToQuantize {
  std::string name;
  lpx_tensor_type type;              // as stored in the input
  std::vector<std::int64_t> dims;    // GGUF order: dims[0] is the row length
};

struct PlannedTensor {
  std::size_t input_index;  // in the `tensors` given to plan_quantization
  lpx_tensor_type type;     // what it becomes (its input type when it is left alone)
};

// The tensors in output order with their types. `layers` is the model's block count; `pure`
// gives every quantizable tensor the mix's base type (llama-quantize --pure).
std::vector<PlannedTensor> plan_quantization(const std::vector<TensorToQuantize>& tensors,
                                             std::uint32_t layers, QuantMix mix, bool pure);

}  // namespace lpx::core
