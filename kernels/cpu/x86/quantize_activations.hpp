// AVX2/FMA/F16C version of reference/quantize_activations.hpp: the same function, the same bytes
// for every finite input. Compiled with -mavx2 -mfma -mf16c: call it only after checking the CPU
// (see cpu/cpu_features.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::LPX_X86_ISA {

// Rounds `batch` rows of `columns` floats to the dot format of `weight_type`, writing
// batch * reference::activation_row_bytes(weight_type, columns) bytes to `out`. Requires that
// size to be nonzero.
void quantize_activations(std::int32_t weight_type, const float* x, std::size_t columns,
                          std::size_t batch, void* out) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
