// SIMD int16-activation matmul: the same bytes (activation rounding) and the same outputs, bit
// for bit, as reference/matmul_i16.hpp, for its weight types. Compiled per ISA level
// (cpu/kernel_set.hpp): call only where the set runs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cpu/cpu_features.hpp"
#include "reference/matmul_i16.hpp"

namespace lpx::kernels::LPX_X86_ISA {

// Weight rows decoded to int16 together for a prompt: at most 72 bytes per row and 32 columns
// (values, scale, minimum) plus a cache line to align them, inside the f32 mode's scratch of
// kF32ScratchRows x columns floats (kernel_set.cpp checks).
inline constexpr std::size_t kI16ScratchRows = 8;

// Runs run(part) on args cut into chunks of activation rows worth half a level-2 cache (1 MiB
// on the 2-core Xeon), each a multiple of `tile` rows: each chunk meets every weight row while
// it stays in cache. Without it a 512-token prompt's rows (2.3 MB at 2048 columns) come from L3
// once per few weight rows (Qwen3-1.7B's Q4_K prompt tile: 74 -> 98 GMAC/s).
template <class Run>
void in_cached_chunks(const reference::I16MatmulArgs& args, std::size_t tile, Run run) noexcept {
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::size_t chunk = std::max(tile, cpu::l2_cache_bytes() / 2 / x_bytes / tile * tile);
  for (std::size_t c0 = 0; c0 < args.batch; c0 += chunk) {
    reference::I16MatmulArgs part = args;
    part.x = static_cast<const std::uint8_t*>(args.x) + c0 * x_bytes;
    part.batch = std::min(chunk, args.batch - c0);
    part.y = args.y + c0 * args.rows;
    run(part);
  }
}

void quantize_activations_i16(std::int32_t type, const float* x, std::size_t columns, std::size_t batch,
                              void* out) noexcept;

void dot_rows_i16(const reference::I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                  void* scratch) noexcept;

}  // namespace lpx::kernels::LPX_X86_ISA
