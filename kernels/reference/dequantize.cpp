#include "reference/dequantize.hpp"

#include "reference/dequantize_blocks.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {

const char* describe(DequantizeStatus status) noexcept {
  switch (status) {
    case DequantizeStatus::ok:
      return "ok";
    case DequantizeStatus::unsupported_type:
      return "not a supported tensor type";
    case DequantizeStatus::not_a_multiple_of_block:
      return "element count is not a multiple of the type's block size";
  }
  return "unknown status";
}

DequantizeStatus dequantize_row(std::int32_t type, const void* src, std::size_t n_elements,
                                float* dst) noexcept {
  const TensorTypeTraits* traits = traits_of(type);
  if (traits == nullptr) return DequantizeStatus::unsupported_type;
  if (n_elements % traits->block_elements != 0) return DequantizeStatus::not_a_multiple_of_block;

  const auto* in = static_cast<const std::uint8_t*>(src);
  const std::size_t n_blocks = n_elements / traits->block_elements;
  // Every enumerator has a case, so -Wswitch flags a type added to the enum but not here.
  switch (traits->type) {
    case LPX_TENSOR_F32:
      blocks::dequantize_f32(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_F16:
      blocks::dequantize_f16(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_BF16:
      blocks::dequantize_bf16(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q8_0:
      blocks::dequantize_q8_0(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q4_0:
      blocks::dequantize_q4_0(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q4_1:
      blocks::dequantize_q4_1(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q5_0:
      blocks::dequantize_q5_0(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q5_1:
      blocks::dequantize_q5_1(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q4_K:
      blocks::dequantize_q4_k(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q5_K:
      blocks::dequantize_q5_k(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q6_K:
      blocks::dequantize_q6_k(in, n_blocks, dst);
      return DequantizeStatus::ok;
    case LPX_TENSOR_Q8_K:
      blocks::dequantize_q8_k(in, n_blocks, dst);
      return DequantizeStatus::ok;
  }
  return DequantizeStatus::unsupported_type;
}

}  // namespace lpx::kernels::reference
