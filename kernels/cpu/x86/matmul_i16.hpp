// SIMD int16-activation matmul: the same bytes (activation rounding) and the same outputs, bit
// for bit, as reference/matmul_i16.hpp, for its weight types. Compiled per ISA level
// (cpu/kernel_set.hpp): call only where the set runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "reference/matmul_i16.hpp"

namespace lpx::kernels::LPX_X86_ISA {

// Weight rows decoded to int16 together for a prompt; scratch holds kI16ScratchRows x
// i16_scratch_row_bytes(columns), which fits in kI16ScratchRows x columns floats.
inline constexpr std::size_t kI16ScratchRows = 8;
constexpr std::size_t i16_scratch_row_bytes(std::size_t columns) noexcept { return columns / 32 * 72; }

void quantize_activations_i16(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept;

void dot_rows_i16(const reference::I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                  void* scratch) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
