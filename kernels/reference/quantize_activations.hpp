// Scalar reference of the first half of a matmul: rounding f32 activation rows to the weight
// type's *dot format* (see lpx/kinds/quant_backend.h). The rounding reproduces the GGUF
// ecosystem's reference engine on x86 (its AVX2 build) bit for bit, so the dot products that
// follow (vec_dot.hpp) see the very integers and scales that engine sees.
//
// Activation row layouts (little-endian, packed, rows back to back):
//   f32   4 B per element
//   f16   2 B per element, round to nearest even
//   bf16  2 B per element, round to nearest even; a NaN becomes a quiet NaN
//   q8_0  34 B per 32 elements: d f16 @0, q int8[32] @2
//   q8_1  36 B per 32 elements: d f16 @0, s f16 @2, q int8[32] @4
//   q8_k  292 B per 256 elements: d f32 @0, q int8[256] @4, bsums int16[16] @260
// q8_0 / q8_1: amax = max |x|, d = amax / 127 (stored as f16), q = round_half_even(x * (127 /
// amax)) (note: 127/amax, not 1/d); q8_1 adds s = f16(d * sum(q)), d taken before its f16
// rounding. q8_k: max = the first element of largest magnitude, q = round_half_even(x * (-127 /
// max)) capped at 127, d = 1 / (-127 / max) as f32, bsums = sums of 16 consecutive q.
//
// Inputs are expected to be finite: an inf or NaN gives a well-defined but meaningless block
// (and the AVX2 kernels may give a different one). An all-zero q8_k block has d = 0, q = 0 and
// bsums = 0.
//
// Thread-safety: no state; callable from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace lpx::kernels::reference {

enum class DotFormat : std::uint8_t { f32, f16, bf16, q8_0, q8_1, q8_k };

// The dot format of matmuls with weights of `weight_type` (an lpx_tensor_type); nullopt when
// the type is not one.
std::optional<DotFormat> dot_format_of(std::int32_t weight_type) noexcept;

// Elements per block of a dot format (1, 32 or 256) and bytes per block.
std::size_t dot_block_elements(DotFormat format) noexcept;
std::size_t dot_block_bytes(DotFormat format) noexcept;

// Bytes of one activation row of `columns` elements in the dot format of `weight_type`; 0 when
// the type is invalid or `columns` is not a whole number of its blocks.
std::size_t activation_row_bytes(std::int32_t weight_type, std::size_t columns) noexcept;

// Rounds `batch` rows of `columns` floats (row-major) to the dot format of `weight_type`,
// writing batch * activation_row_bytes(weight_type, columns) bytes to `out` (no alignment
// needed). Requires activation_row_bytes(weight_type, columns) != 0.
void quantize_activations(std::int32_t weight_type, const float* x, std::size_t columns,
                          std::size_t batch, void* out) noexcept;

// One row of `n` floats in a given dot format (n a whole number of its blocks).
void quantize_row(DotFormat format, const float* x, std::size_t n, std::uint8_t* out) noexcept;

}  // namespace lpx::kernels::reference
