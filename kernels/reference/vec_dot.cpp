#include "reference/vec_dot.hpp"

#include "reference/tensor_types.hpp"
#include "reference/vec_dot_blocks.hpp"

namespace lpx::kernels::reference {

float vec_dot(std::int32_t type, const void* w, const void* a, std::size_t columns) noexcept {
  const TensorTypeTraits* traits = traits_of(type);
  if (traits == nullptr) return 0.0f;
  const auto* wb = static_cast<const std::uint8_t*>(w);
  const auto* ab = static_cast<const std::uint8_t*>(a);
  switch (traits->type) {
    case LPX_TENSOR_F32:
      return dots::f32(wb, ab, columns);
    case LPX_TENSOR_F16:
      return dots::f16(wb, ab, columns);
    case LPX_TENSOR_BF16:
      return dots::bf16(wb, ab, columns);
    case LPX_TENSOR_Q8_0:
      return dots::q8_0(wb, ab, columns);
    case LPX_TENSOR_Q4_0:
      return dots::q4_0(wb, ab, columns);
    case LPX_TENSOR_Q4_1:
      return dots::q4_1(wb, ab, columns);
    case LPX_TENSOR_Q5_0:
      return dots::q5_0(wb, ab, columns);
    case LPX_TENSOR_Q5_1:
      return dots::q5_1(wb, ab, columns);
    case LPX_TENSOR_Q4_K:
      return dots::q4_k(wb, ab, columns);
    case LPX_TENSOR_Q5_K:
      return dots::q5_k(wb, ab, columns);
    case LPX_TENSOR_Q6_K:
      return dots::q6_k(wb, ab, columns);
    case LPX_TENSOR_Q8_K:
      return dots::q8_k(wb, ab, columns);
  }
  return 0.0f;
}

float gemm_dot(std::int32_t type, const void* w, const void* a, std::size_t columns) noexcept {
  const auto* wb = static_cast<const std::uint8_t*>(w);
  const auto* ab = static_cast<const std::uint8_t*>(a);
  switch (type) {
    case LPX_TENSOR_F32:
      return dots::gemm_f32(wb, ab, columns);
    case LPX_TENSOR_F16:
      return dots::gemm_f16(wb, ab, columns);
    case LPX_TENSOR_BF16:
      return dots::gemm_bf16(wb, ab, columns);
    default:
      return vec_dot(type, w, a, columns);
  }
}

}  // namespace lpx::kernels::reference
