// Scalar reference of the int16-activation matmul, the CPU backends' `activations = "i16"`
// mode: integer dot products like the q8 mode's, with activations rounded to 16 bits instead of
// 8, so each activation is off by at most amax / 65534 of its block (32 elements, or 256 for the
// K types: steps 256 times finer than q8_0's or Q8_K's) while the weights stay exactly the
// model's. For the 32-element weight types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) and the K types Q4_K,
// Q5_K, Q6_K; every other type (float weights, Q8_K) multiplies with f32 activations
// (matmul_f32.hpp), which the plugins route (i16_dot_type()).
//
// Two activation formats, chosen by the weight type (i16_super_blocks()); a row takes the same
// bytes in both (i16_row_bytes), so buffers are sized without knowing the type.
//
// The 32-element types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1): blocks of kI16BlockBytes: f32 d =
// amax / 32767, f32 s = d * (sum of q) (exact: the sum is below 2^24), int16 q[32] =
// round_half_even(x * (32767 / amax)); amax = 0, or so small that 32767 / amax overflows, gives
// q = 0. Activations must be finite. The dot, block by block in row order, with w(e) the weight's
// integer and dw, mw the block's scale and minimum as f32:
//   Q8_0: q; Q4_0: q - 8; Q5_0: q - 16; Q4_1, Q5_1: q; dw, mw their f16 d and m.
// Lane l (0..7) takes the integer S_l = sum of w(e) * q(e) over e in {2l, 2l + 1, 16 + 2l, 17 + 2l}
// (exact in int32 and in f32), then acc_l = fma(dw * da, float(S_l), acc_l) with dw * da rounded
// to f32; the _1 types also take m = fma(mw, s, m) per block. Result: hsum8(acc) (((a0+a4) +
// (a2+a6)) + ((a1+a5) + (a3+a7))), plus m. The lanes are those of two pmaddwd over elements
// 0..15 and 16..31, so SIMD code sums the same integers and rounds the same floats.
//
// The K types (Q4_K, Q5_K, Q6_K): 256-element super-blocks of kI16SuperBlockBytes: int16 q[256]
// rounded as above against the super-block's amax, f32 d at byte 512, f32 s[8] at 516 (s_j = d *
// the sum of q over elements 32j..32j+31, exact before the product), zeros to byte 576. One
// activation scale per weight super-block lets the weights' sub-block scales go into the
// integers, so the integer sums run a whole span before one conversion (where the per-block
// scaling above costs three float operations per 32 elements):
//   Q4_K, Q5_K: w = sc_j * q for sub-block j (|w| <= 63 * 31), dw = d, span 256 elements;
//     mw_j = -(dmin * m_j) (exact in f32) per sub-block.
//   Q6_K: w = (q - 32) * sc, the int8 scale of its 16-element sub-block (|w| <= 4096), dw = d,
//     span 128 elements (a half super-block), no minimum.
// Per span, lane l takes S_l = the sum of w(e) * q(e) over the span's e with e mod 16 in {2l, 2l +
// 1} (exact in int32: at most 32 * 1953 * 32767 or 16 * 4096 * 32767, both below 2^31; float(S_l)
// rounds to nearest even as cvtdq2ps does), then acc_l = fma(dw * da, float(S_l), acc_l); Q4_K and
// Q5_K also take macc_j = fma(mw_j, s_j, macc_j) per super-block. Result: hsum8(acc), plus
// hsum8(macc). The lanes are those of pmaddwd / vpdpwssd accumulating each 32-element block's
// halves, so SIMD code sums the same integers, in any order (int32 adds wrap, and the totals fit).
//
// Thread-safety: no state; callable from any thread on disjoint row ranges. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "lpx/kinds/tensor.h"

namespace lpx::kernels::reference {

inline constexpr std::size_t kI16BlockElements = 32;
inline constexpr std::size_t kI16BlockBytes = 8 + 2 * kI16BlockElements;
inline constexpr std::size_t kI16SuperBlockElements = 256;
inline constexpr std::size_t kI16SuperBlockBytes = 8 * kI16BlockBytes;
inline constexpr std::size_t kI16SuperBlockScaleOffset = 512;  // f32 d, then f32 s[8]

// Whether `type` multiplies with int16 activations in i16 mode.
bool i16_dot_type(std::int32_t type) noexcept;

// Whether `type`'s activations take the 256-element super-block format (the K types).
constexpr bool i16_super_blocks(std::int32_t type) noexcept {
  return type == LPX_TENSOR_Q4_K || type == LPX_TENSOR_Q5_K || type == LPX_TENSOR_Q6_K;
}

// Bytes of one activation row of `columns` (a multiple of 32; of 256 for the K types) elements,
// in either format.
constexpr std::size_t i16_row_bytes(std::size_t columns) noexcept {
  return columns / kI16BlockElements * kI16BlockBytes;
}

// `batch` rows of `columns` f32 into i16_row_bytes(columns) each, in `type`'s format.
void quantize_activations_i16(std::int32_t type, const float* x, std::size_t columns, std::size_t batch,
                              void* out) noexcept;

struct I16MatmulArgs {
  std::int32_t type;      // an i16_dot_type
  const void* weights;    // `rows` rows of `row_bytes` bytes
  std::size_t row_bytes;  // row_size_bytes(type, columns)
  std::size_t rows;
  std::size_t columns;  // a multiple of 32
  const void* x;        // batch rows of i16_row_bytes(columns), from quantize_activations_i16(type)
  std::size_t batch;
  float* y;  // batch x rows f32, row-major: y[b * rows + r]
};

// One output: weight row `w` with activation row `x`, in the order above.
float dot_i16_activations(std::int32_t type, const void* w, const void* x, std::size_t columns) noexcept;

// Writes y[b * rows + r] for every b < batch and r in [row_begin, row_end).
void dot_rows_i16(const I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept;

}  // namespace lpx::kernels::reference
