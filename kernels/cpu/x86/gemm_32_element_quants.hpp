// Batched AVX2 dots (two or more activation rows: prompt processing, several sequences decoding)
// of the 32-element block types without a minimum: Q8_0, Q4_0, Q5_0. Internal to
// kernels/cpu/x86; called by the per-type entries in dot_32_element_quants.cpp, whose one-row
// kernels stream weights for decode and serve Q4_1 / Q5_1 at every batch.
#pragma once

#include <cstddef>

#include "reference/matmul.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {

// Each writes args.y[b * rows + r] for every b < batch and r in [row_begin, row_end), bit for bit
// as reference::dot_rows. Any batch works; they pay off from two rows up. (Plain functions, not a
// template: the AVX2 library must define no weak symbol, see docs/kernels-cpu.md.)
void q8_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept;
void q4_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept;
void q5_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
