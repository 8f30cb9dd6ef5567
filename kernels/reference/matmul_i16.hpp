// Scalar reference of the int16-activation matmul, the CPU backends' `activations = "i16"`
// mode: integer dot products like the q8 mode's, with activations rounded to 16 bits instead of
// 8, so each activation is off by at most amax / 65534 of its 32-element block (256 times finer
// than q8_0) while the weights stay exactly the model's. For the 32-element weight types (Q8_0,
// Q4_0, Q4_1, Q5_0, Q5_1) and the K types Q4_K, Q5_K, Q6_K; every other type (float weights,
// Q8_K) multiplies with f32 activations (matmul_f32.hpp), which the plugins route
// (i16_dot_type()).
//
// Activation block (kI16BlockBytes): f32 d = amax / 32767, f32 s = d * (sum of q) (exact: the
// sum is below 2^24), int16 q[32] = round_half_even(x * (32767 / amax)); amax = 0, or so small
// that 32767 / amax overflows, gives q = 0. Activations must be finite.
//
// The dot of one weight row with one activation row, 32-element block by block in row order:
// w(e) is the weight's integer, dw and mw the block's scale and minimum as f32:
//   Q8_0: q; Q4_0: q - 8; Q5_0: q - 16; Q4_1, Q5_1: q; dw, mw their f16 d and m.
//   Q4_K, Q5_K: sub-block j of a super-block is block j: w = q, dw = d * sc_j,
//     mw = -(dmin * m_j) (both exact in f32).
//   Q6_K: block j of a super-block holds its 16-element sub-blocks 2j and 2j + 1:
//     w = (q - 32) * sc (the sub-block's int8 scale folded in, |w| <= 4096), dw = d, no minimum.
// Lane l (0..7) takes the integer S_l = sum of w(e) * q(e) over e in {2l, 2l + 1, 16 + 2l, 17 + 2l}
// (exact in int32; below 2^24 and so exact in f32 too except for Q6_K, whose float(S_l) rounds to
// nearest even as cvtdq2ps does), then acc_l = fma(dw * da, float(S_l), acc_l) with dw * da
// rounded to f32; the types with a minimum also take m = fma(mw, s, m) per block. Result:
// ((a0+a4) + (a2+a6)) + ((a1+a5) + (a3+a7)), plus m. The lanes are those of two pmaddwd over
// elements 0..15 and 16..31 (or pmaddwd then vpdpwssd), so SIMD code sums the same integers and
// rounds the same floats.
//
// Thread-safety: no state; callable from any thread on disjoint row ranges. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference {

inline constexpr std::size_t kI16BlockElements = 32;
inline constexpr std::size_t kI16BlockBytes = 8 + 2 * kI16BlockElements;

// Whether `type` multiplies with int16 activations in i16 mode.
bool i16_dot_type(std::int32_t type) noexcept;

// Bytes of one activation row of `columns` (a multiple of 32) elements.
constexpr std::size_t i16_row_bytes(std::size_t columns) noexcept {
  return columns / kI16BlockElements * kI16BlockBytes;
}

// `batch` rows of `columns` f32 (columns a multiple of 32) into i16_row_bytes(columns) each.
void quantize_activations_i16(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept;

struct I16MatmulArgs {
  std::int32_t type;      // an i16_dot_type
  const void* weights;    // `rows` rows of `row_bytes` bytes
  std::size_t row_bytes;  // row_size_bytes(type, columns)
  std::size_t rows;
  std::size_t columns;  // a multiple of 32
  const void* x;        // batch rows of i16_row_bytes(columns), from quantize_activations_i16
  std::size_t batch;
  float* y;  // batch x rows f32, row-major: y[b * rows + r]
};

// One output: weight row `w` with activation row `x`, in the order above.
float dot_i16_activations(std::int32_t type, const void* w, const void* x, std::size_t columns) noexcept;

// Writes y[b * rows + r] for every b < batch and r in [row_begin, row_end).
void dot_rows_i16(const I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept;

}  // namespace lpx::kernels::reference
