// AVX2/FMA/F16C matmul over quantized activations: the same outputs, bit for bit, as
// reference::dot_rows (see reference/matmul.hpp for the arithmetic and the summation orders).
// Compiled with -mavx2 -mfma -mf16c: call it only after checking the CPU (cpu/cpu_features.hpp).
//
// Decode (one activation row) streams each weight row once, four rows at a time so that their
// accumulation chains overlap; with several activation rows each weight block is loaded once and
// used for up to four of them.
//
// Thread-safety: no state; callable from any thread on disjoint row ranges. No allocation.
#pragma once

#include <cstddef>

#include "reference/matmul.hpp"

namespace lpx::kernels::LPX_X86_ISA {

// Writes args.y[b * rows + r] for every b < batch and r in [row_begin, row_end).
void dot_rows(const reference::MatmulArgs& args, std::size_t row_begin,
              std::size_t row_end) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
