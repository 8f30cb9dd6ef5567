// Scalar reference of the f32-activation matmul, the CPU backends' `activations = "f32"` mode:
// the activations stay f32 and each weight row is dequantized exactly (dequantize.hpp, the same
// f32 values bit for bit), so every product is a float product of the model's own weight values,
// without the 8-bit rounding of the default mode (matmul.hpp). Slower, and no longer the
// reference engine's arithmetic, but closer to the model's.
//
// The order, for every weight type, batch size and row split: y[b][r] is the F32 dot product
// of vec_dot.hpp applied to the dequantized row w = dequantize(W[r]) and x[b]: four
// accumulators of eight lanes over steps of 32 elements (accumulator j, lane l takes elements
// 32k + 8j + l, acc = fma(w, x, acc)), folded as ((s0 + s2) + (s1 + s3)), then low half + high
// half, then (t0 + t1) + (t2 + t3); the n % 32 leftover elements (f32 / f16 / bf16 rows only)
// are then added one by one in f32, multiply and add rounded separately. For F32 weights this
// is exactly vec_dot(LPX_TENSOR_F32, ...).
//
// Thread-safety: no state; callable from any thread on disjoint row ranges. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference {

// One f32-activation matmul. Shared by every CPU implementation.
struct F32MatmulArgs {
  std::int32_t type;      // weight type, an lpx_tensor_type
  const void* weights;    // `rows` rows of `row_bytes` bytes
  std::size_t row_bytes;  // row_size_bytes(type, columns)
  std::size_t rows;
  std::size_t columns;  // a whole number of the type's blocks
  const float* x;       // batch x columns f32, row-major
  std::size_t batch;
  float* y;  // batch x rows f32, row-major: y[b * rows + r]
};

// One output: the weight row at `w` (`columns` elements of `type`) dotted with the f32 row `x`,
// in the order above. Requires a valid type and columns a whole number of its blocks.
float dot_f32_activations(std::int32_t type, const void* w, const float* x,
                          std::size_t columns) noexcept;

// Writes y[b * rows + r] for every b < batch and r in [row_begin, row_end).
void dot_rows_f32(const F32MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept;

}  // namespace lpx::kernels::reference
