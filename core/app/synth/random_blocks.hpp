// Random weights in a tensor type's own block format: every block well formed (finite f16
// scales, any quant bits), values of the magnitude trained weights have (|w| ≲ 0.05). Random
// bytes, not quantized floats: nothing to round, and gigabytes come out at memory speed.
#pragma once

#include <cstdint>

#include "lpx/kinds/tensor.h"

namespace lpx::core::synth {

// Bytes per row of `columns` elements of `type` (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q4_K).
std::uint64_t row_bytes(lpx_tensor_type type, std::uint64_t columns);
// GGML's type id for GGUF.
std::uint32_t ggml_type_id(lpx_tensor_type type);
// Fills rows [first_row, first_row + n_rows) of a tensor; the same (seed, row) always gives the
// same bytes.
void fill_random_rows(lpx_tensor_type type, std::uint64_t columns, std::uint64_t seed,
                      std::uint64_t first_row, std::uint64_t n_rows, std::uint8_t* out);

}  // namespace lpx::core::synth
