// Weight quantizers: rows of f32 into a tensor type's blocks, byte for byte what llama.cpp's
// reference quantizers write without an importance matrix (ggml_quantize_chunk, which
// llama-quantize calls). `lpx-pipeline quantize` is held to llama-quantize's output, so these are
// pinned by tests/fixtures/quantize/blocks.json (tools/make_quantize_fixtures.py), not merely
// close. Single-threaded and allocation-free; callers split rows across threads.
#pragma once

#include <cstdint>

#include "lpx/kinds/tensor.h"

namespace lpx::kernels::reference {

// Whether quantize_rows writes `type` (F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K).
bool can_quantize_weights(lpx_tensor_type type) noexcept;

// Quantizes `rows` rows of `columns` floats (`columns` a multiple of the type's block size) into
// `out`, which holds rows x the type's row bytes. Precondition: can_quantize_weights(type).
void quantize_weight_rows(lpx_tensor_type type, const float* in, std::int64_t rows,
                          std::int64_t columns, std::uint8_t* out) noexcept;

// Whether quantized rows hold only finite numbers where they hold floats (F16/BF16 values, the
// f16 scales and mins of blocks), as llama-quantize checks before it writes a tensor.
bool quantized_rows_finite(lpx_tensor_type type, const std::uint8_t* data, std::int64_t rows,
                           std::int64_t columns) noexcept;

}  // namespace lpx::kernels::reference
