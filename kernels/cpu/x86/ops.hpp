// AVX2/FMA/F16C versions of the kernels in reference/ops.hpp, with the same signatures and the
// same results (bit-exact unless a function says otherwise). Compiled with -mavx2 -mfma -mf16c:
// call them only after checking the CPU (see cpu_features.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/kernel_set.hpp"
#include "lpx/kinds/quant_backend.h"

namespace lpx::kernels::LPX_X86_ISA {

// One row: out = (x * 1/sqrt(mean(x^2) + eps)) * weight. out may alias x.
void rms_norm_row(const float* x, const float* weight, float* out, std::size_t n,
                  float eps) noexcept;

// One row of `heads` heads of `head_dim` floats at cache position `position`, rotated in place.
void rope_row(float* x, std::size_t heads, std::size_t head_dim, std::int32_t position,
              const lpx_rope_params& params) noexcept;

// out[i] = silu(gate[i]) * up[i]. out may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, std::size_t n) noexcept;
void geglu(const float* gate, const float* up, float* out, std::size_t n) noexcept;  // reference::geglu_approx

// Floats of scratch attention_row needs for a sequence of up to `max_context` positions.
std::size_t attention_scratch_floats(std::uint32_t max_context) noexcept;

// Query row `row` of `args`, query heads [head_begin, head_end): writes those heads of
// args.out's row. `scratch` holds attention_scratch_floats(positions[row] + 1) floats.
void attention_row(const lpx_attention_args& args, std::uint32_t row, std::uint32_t head_begin,
                   std::uint32_t head_end, float* scratch) noexcept;

// Whether attention_block computes `args` (several query rows, head_dim a multiple of 8 and at
// most 1024): the k1x8 orders of the reference, which a call of several rows uses.
bool attention_block_takes(const lpx_attention_args& args) noexcept;

// Floats of scratch attention_block needs for a sequence of up to `max_context` positions.
std::size_t attention_block_scratch_floats(std::uint32_t max_context,
                                           std::uint32_t head_dim) noexcept;

// Query rows [row_begin, row_end) x query heads [head_begin, head_end) of `args`, which
// attention_block_takes: writes those heads of those rows of args.out, the same bits as
// attention_row. The heads share one kv head, and rows x heads <= cpu::kAttentionBlockQueries.
// `scratch` holds attention_block_scratch_floats(largest position of the rows + 1, head_dim).
void attention_block(const lpx_attention_args& args, std::uint32_t row_begin,
                     std::uint32_t row_end, std::uint32_t head_begin, std::uint32_t head_end,
                     float* scratch) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
