// Scalar reference matmul: y[b][r] = dot(W[r], x[b]) with the activations first rounded to the
// weight type's dot format (quantize_activations.hpp), then one dot product per output in the
// reference engine's order (vec_dot.hpp). Which order depends on the whole shape, exactly as in
// that engine: f32 / f16 / bf16 weights use the tiled gemm order when there are 2+ activation
// rows, columns % 8 == 0 and rows % 4 == 0, and the vec_dot order otherwise; every other type
// always uses vec_dot (the engine's tiled kernels give the same bits for Q8_0 / Q4_0 / Q5_0).
// Each output depends only on its weight row and activation row, so splitting the rows across
// threads never changes a result.
//
// Not reproduced: the reference engine repacks Q4_0 and Q4_K weights into interleaved layouts on
// AVX2 machines (and uses tiled K-quant kernels for 8+ activation rows), whose sums are ordered
// differently; LPX keeps the plain vec_dot order for those types.
//
// Thread-safety: no state; callable from any thread. dot_rows does not allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lpx::kernels::reference {

// One matmul over already-quantized activations. Shared by every CPU implementation.
struct MatmulArgs {
  std::int32_t type;      // weight type, an lpx_tensor_type
  const void* weights;    // `rows` rows of `row_bytes` bytes
  std::size_t row_bytes;  // row_size_bytes(type, columns)
  std::size_t rows;
  std::size_t columns;      // a whole number of the type's blocks
  const void* activations;  // `batch` rows of activation_row_bytes(type, columns) bytes
  std::size_t batch;
  float* y;  // batch x rows f32, row-major: y[b * rows + r]
};

// True when the outputs of this shape are summed in the tiled gemm order.
bool uses_gemm_order(std::int32_t type, std::size_t rows, std::size_t columns,
                     std::size_t batch) noexcept;

// Writes y[b * rows + r] for every b < batch and r in [row_begin, row_end).
void dot_rows(const MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept;

// The whole matmul of f32 activations x (batch x columns): quantizes into `scratch` (resized as
// needed, so this allocates) and fills y (batch x rows). For tests and tools.
void matmul(std::int32_t type, const void* weights, std::size_t rows, std::size_t columns,
            const float* x, std::size_t batch, float* y, std::vector<std::uint8_t>& scratch);

}  // namespace lpx::kernels::reference
