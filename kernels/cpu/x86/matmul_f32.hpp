// AVX2/FMA/F16C f32-activation matmul: the same outputs, bit for bit, as
// reference::dot_rows_f32 (see reference/matmul_f32.hpp for the arithmetic and its one order).
// Compiled with -mavx2 -mfma -mf16c: call it only after checking the CPU (cpu/cpu_features.hpp).
//
// F32, F16 and BF16 are converted in registers, 32 elements at a time, straight into the fma
// chains. The quantized types with one activation row decode the same way (32-element types)
// or a row at a time into `scratch` (the K types, 256-element blocks); with several activation
// rows every quantized weight row is decoded once into `scratch` and all rows are dotted from
// there: up to eight in one pass of tiles; more (a prefill) against blocks of kF32ScratchRows
// decoded weight rows, so that each tile of four activation rows stays in L1 across a block.
//
// Thread-safety: no state; callable from any thread on disjoint row ranges, each with its own
// scratch. No allocation.
#pragma once

#include <cstddef>

#include "reference/matmul_f32.hpp"

namespace lpx::kernels::LPX_X86_ISA {

// Weight rows decoded together into scratch when more than eight activation rows (a prefill)
// share them: each tile of activations is then read from memory once per this many weight rows.
inline constexpr std::size_t kF32ScratchRows = 8;

// Writes args.y[b * rows + r] for every b < batch and r in [row_begin, row_end). `scratch`
// holds kF32ScratchRows * args.columns floats, private to the caller (written for the K types,
// and for every quantized type when batch > 1).
void dot_rows_f32(const reference::F32MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                  float* scratch) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
