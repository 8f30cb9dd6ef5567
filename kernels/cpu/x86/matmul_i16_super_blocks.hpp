// The K types' side of the SIMD i16 matmul (matmul_i16.hpp): their super-block activation
// rounding and their dots, the same bytes and bits as reference/matmul_i16.hpp. Internal to
// kernels/cpu/x86.
#pragma once

#include <cstddef>

#include "reference/matmul_i16.hpp"

namespace lpx::kernels::LPX_X86_ISA {

void quantize_i16_super_blocks(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept;

// args.type is Q4_K, Q5_K or Q6_K; scratch as dot_rows_i16's.
void dot_rows_i16_super_blocks(const reference::I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                               void* scratch) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
