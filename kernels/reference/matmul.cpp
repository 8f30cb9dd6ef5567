#include "reference/matmul.hpp"

#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot.hpp"

namespace lpx::kernels::reference {

bool uses_gemm_order(std::int32_t type, std::size_t rows, std::size_t columns,
                     std::size_t batch) noexcept {
  const bool float_type =
      type == LPX_TENSOR_F32 || type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16;
  return float_type && batch >= 2 && columns % 8 == 0 && rows % 4 == 0;
}

void dot_rows(const MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept {
  const std::size_t activation_bytes = activation_row_bytes(args.type, args.columns);
  const bool gemm = uses_gemm_order(args.type, args.rows, args.columns, args.batch);
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  const auto* activations = static_cast<const std::uint8_t*>(args.activations);
  for (std::size_t r = row_begin; r < row_end; ++r) {
    const std::uint8_t* w = weights + r * args.row_bytes;
    for (std::size_t b = 0; b < args.batch; ++b) {
      const std::uint8_t* a = activations + b * activation_bytes;
      args.y[b * args.rows + r] =
          gemm ? gemm_dot(args.type, w, a, args.columns) : vec_dot(args.type, w, a, args.columns);
    }
  }
}

void matmul(std::int32_t type, const void* weights, std::size_t rows, std::size_t columns,
            const float* x, std::size_t batch, float* y, std::vector<std::uint8_t>& scratch) {
  const std::size_t activation_bytes = activation_row_bytes(type, columns);
  const auto row_bytes = row_size_bytes(type, columns);
  if (activation_bytes == 0 || !row_bytes) return;
  if (scratch.size() < activation_bytes * batch) scratch.resize(activation_bytes * batch);
  quantize_activations(type, x, columns, batch, scratch.data());
  const MatmulArgs args{
      type, weights, static_cast<std::size_t>(*row_bytes), rows, columns, scratch.data(), batch, y};
  dot_rows(args, 0, rows);
}

}  // namespace lpx::kernels::reference
