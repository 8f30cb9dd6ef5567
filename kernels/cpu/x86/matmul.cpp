#include "cpu/x86/matmul.hpp"

#include "cpu/x86/dot_kernels.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::LPX_X86_ISA {

void dot_rows(const reference::MatmulArgs& args, std::size_t row_begin,
              std::size_t row_end) noexcept {
  const reference::TensorTypeTraits* traits = reference::traits_of(args.type);
  if (traits == nullptr || row_begin >= row_end || args.batch == 0) return;
  switch (traits->type) {
    case LPX_TENSOR_F32:
      return kernels::f32(args, row_begin, row_end);
    case LPX_TENSOR_F16:
      return kernels::f16(args, row_begin, row_end);
    case LPX_TENSOR_BF16:
      return kernels::bf16(args, row_begin, row_end);
    case LPX_TENSOR_Q8_0:
      return kernels::q8_0(args, row_begin, row_end);
    case LPX_TENSOR_Q4_0:
      return kernels::q4_0(args, row_begin, row_end);
    case LPX_TENSOR_Q4_1:
      return kernels::q4_1(args, row_begin, row_end);
    case LPX_TENSOR_Q5_0:
      return kernels::q5_0(args, row_begin, row_end);
    case LPX_TENSOR_Q5_1:
      return kernels::q5_1(args, row_begin, row_end);
    case LPX_TENSOR_Q4_K:
      return kernels::q4_k(args, row_begin, row_end);
    case LPX_TENSOR_Q5_K:
      return kernels::q5_k(args, row_begin, row_end);
    case LPX_TENSOR_Q6_K:
      return kernels::q6_k(args, row_begin, row_end);
    case LPX_TENSOR_Q8_K:
      return kernels::q8_k(args, row_begin, row_end);
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
