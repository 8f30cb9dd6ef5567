// Batched AVX2 dots (two or more activation rows: prompt processing, several sequences decoding)
// of the 32-element block types without a minimum: Q8_0, Q4_0, Q5_0. Internal to
// kernels/cpu/avx2; called by the per-type entries in dot_32_element_quants.cpp, whose one-row
// kernels stream weights for decode and serve Q4_1 / Q5_1 at every batch.
#pragma once

#include <cstddef>

#include "cpu/avx2/weight_blocks.hpp"
#include "reference/matmul.hpp"

namespace lpx::kernels::avx2::kernels {

// Writes args.y[b * rows + r] for every b < batch and r in [row_begin, row_end), bit for bit
// as reference::dot_rows. Any batch works; it pays off from two rows up.
template <class W>
void gemm_rows(const reference::MatmulArgs& args, std::size_t row_begin,
               std::size_t row_end) noexcept;

extern template void gemm_rows<blocks::Q8_0W>(const reference::MatmulArgs&, std::size_t,
                                              std::size_t) noexcept;
extern template void gemm_rows<blocks::Q4_0W>(const reference::MatmulArgs&, std::size_t,
                                              std::size_t) noexcept;
extern template void gemm_rows<blocks::Q5_0W>(const reference::MatmulArgs&, std::size_t,
                                              std::size_t) noexcept;

}  // namespace lpx::kernels::avx2::kernels
