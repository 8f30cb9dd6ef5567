// The prompt loop both i16 weight layouts share (matmul_i16.cpp, matmul_i16_super_blocks.cpp):
// kI16ScratchRows weight rows at a time decoded into the scratch, then every activation row
// against them in register tiles. Internal to kernels/cpu/x86.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/cache_aligned.hpp"
#include "cpu/x86/matmul_i16.hpp"

namespace lpx::kernels::LPX_X86_ISA::i16 {

// The scratch, from a cache line on: the decoded rows take at most 18 bytes a column of its 32
// (matmul_i16.hpp), so there is room to align them.
inline std::uint8_t* aligned_scratch(void* scratch) noexcept {
  const auto address = reinterpret_cast<std::uintptr_t>(scratch);
  return static_cast<std::uint8_t*>(scratch) + (-address & (cpu::kCacheLine - 1));
}

// Tiles provides, for its DecodedRows:
//   static void decode(const std::uint8_t* weight_row, const DecodedRows&, std::size_t i);
//   template <int B> static void row_tile(args, rows, i, r, b0);   // scratch row i x B rows
//   template <int kPairs, int B> static void pair_tile(args, rows, i0, r0, b0);  // AVX-512:
//     scratch rows i0 .. i0 + 2 kPairs - 1 (pairs) x B activation rows
template <class Tiles, class DecodedRows>
void decoded_row_tiles(const reference::I16MatmulArgs& args, const DecodedRows& rows, std::size_t row_begin,
                       std::size_t row_end) noexcept {
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  for (std::size_t r0 = row_begin; r0 < row_end; r0 += kI16ScratchRows) {
    const std::size_t n = r0 + kI16ScratchRows <= row_end ? kI16ScratchRows : row_end - r0;
    for (std::size_t i = 0; i < n; ++i) Tiles::decode(weights + (r0 + i) * args.row_bytes, rows, i);
    // The decoded rows against activation rows b .. b + B - 1: pairs of rows where the set has
    // the 512-bit tiles, single rows for the rest.
    auto tiles = [&]<int B>(std::size_t b) {
      std::size_t i = 0;
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
      if constexpr (B >= 4) {
        for (; i + 4 <= n; i += 4) Tiles::template pair_tile<2, B>(args, rows, i, r0 + i, b);
        for (; i + 2 <= n; i += 2) Tiles::template pair_tile<1, B>(args, rows, i, r0 + i, b);
      }
#endif
      for (; i < n; ++i) Tiles::template row_tile<B>(args, rows, i, r0 + i, b);
    };
    std::size_t b = 0;
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
    // Six activation rows a tile: twelve independent accumulator chains hide vpdpwssd's latency
    // (eight, with four rows, ran 25 % slower on the K types).
    for (; b + 6 <= args.batch; b += 6) tiles.template operator()<6>(b);
#endif
    for (; b + 4 <= args.batch; b += 4) tiles.template operator()<4>(b);
    switch (args.batch - b) {
      case 3: tiles.template operator()<3>(b); break;
      case 2: tiles.template operator()<2>(b); break;
      case 1: tiles.template operator()<1>(b); break;
      default: break;
    }
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA::i16
