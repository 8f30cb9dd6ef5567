#include "reference/matmul_f32.hpp"

#include <algorithm>

#include "reference/dequantize.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference {
namespace {

// The row is dequantized a chunk at a time (a whole number of blocks and of 32-element steps),
// so the accumulation runs over the row in order without a row-sized buffer.
constexpr std::size_t kChunk = 256;

}  // namespace

float dot_f32_activations(std::int32_t type, const void* w, const float* x,
                          std::size_t columns) noexcept {
  const TensorTypeTraits* traits = traits_of(type);
  if (traits == nullptr) return 0.0f;
  // The generic path below with a plain copy for a dequantizer: the same bits.
  if (type == LPX_TENSOR_F32) return vec_dot(LPX_TENSOR_F32, w, x, columns);

  const auto* bytes = static_cast<const std::uint8_t*>(w);
  const auto offset = [traits](std::size_t element) {
    return element / traits->block_elements * traits->block_bytes;
  };
  float sum[4][8] = {};
  float values[kChunk];
  const std::size_t steps_end = columns / 32 * 32;
  for (std::size_t c = 0; c < steps_end; c += kChunk) {
    const std::size_t n = std::min(kChunk, steps_end - c);
    (void)dequantize_row(type, bytes + offset(c), n, values);
    dots::f32_steps(values, x + c, n / 32, sum);
  }
  float result = dots::fold_pairwise(sum);
  if (steps_end < columns) {  // fewer than 32 elements of a float type
    const std::size_t n = columns - steps_end;
    (void)dequantize_row(type, bytes + offset(steps_end), n, values);
    for (std::size_t i = 0; i < n; ++i) result += values[i] * x[steps_end + i];
  }
  return result;
}

void dot_rows_f32(const F32MatmulArgs& args, std::size_t row_begin, std::size_t row_end) noexcept {
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t b = 0; b < args.batch; ++b) {
      args.y[b * args.rows + r] = dot_f32_activations(args.type, weights + r * args.row_bytes,
                                                      args.x + b * args.columns, args.columns);
    }
  }
}

}  // namespace lpx::kernels::reference
