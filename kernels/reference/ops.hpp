// Scalar reference of every non-matmul kernel of a decode step: RMSNorm, rotary embedding,
// SwiGLU, GeGLU and attention over the paged KV cache. Like the rest of reference/, these functions
// *define* LPX's arithmetic (see lpx/kinds/quant_backend.h): each follows the GGUF ecosystem's
// reference engine operation by operation (same rounding points, same exp approximation, same
// summation order), so a backend tested against them reproduces that engine's logits.
//
// Thread-safety: no state; callable from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lpx/kinds/quant_backend.h"

namespace lpx::kernels::reference {

// One row: out = (x * 1/sqrt(mean(x^2) + eps)) * weight. out may alias x.
void rms_norm_row(const float* x, const float* weight, float* out, std::size_t n,
                  float eps) noexcept;

// One row of `heads` heads of `head_dim` floats at cache position `position`, rotated in place.
void rope_row(float* x, std::size_t heads, std::size_t head_dim, std::int32_t position,
              const lpx_rope_params& params) noexcept;

// out[i] = silu(gate[i]) * up[i]. out may alias gate or up.
void swiglu(const float* gate, const float* up, float* out, std::size_t n) noexcept;

// gelu(v), the tanh approximation (ops_geglu.cpp).
float gelu_tanh(float v) noexcept;
// out[i] = gelu_tanh(gate[i]) * up[i]. out may alias gate or up.
void geglu(const float* gate, const float* up, float* out, std::size_t n) noexcept;
// out[i] = gelu_approx(gate[i]) * up[i] (ops_arithmetic.hpp): the GeGLU of the CPU engines
// (activations f32 and i16), which vectorises; geglu's tanh is the one CUDA reproduces. out may
// alias gate or up.
void geglu_approx(const float* gate, const float* up, float* out, std::size_t n) noexcept;
// geglu at f16 precision, as llama.cpp's CPU backend computes it (ops_geglu.cpp): what the cpu
// backends run with q8 activations. out may alias gate or up.
void geglu_f16(const float* gate, const float* up, float* out, std::size_t n) noexcept;

// The first cache position a query row at `position` attends to: 0, or with a window the
// oldest position inside it.
std::uint32_t first_attended(std::int32_t position, std::uint32_t window) noexcept;

// Floats of scratch attention_row needs for a sequence of up to `max_context` positions.
std::size_t attention_scratch_floats(std::uint32_t max_context) noexcept;

// Query row `row` of `args`, query heads [head_begin, head_end): writes those heads of
// args.out's row. `scratch` holds attention_scratch_floats(positions[row] + 1) floats.
void attention_row(const lpx_attention_args& args, std::uint32_t row, std::uint32_t head_begin,
                   std::uint32_t head_end, float* scratch) noexcept;

}  // namespace lpx::kernels::reference
