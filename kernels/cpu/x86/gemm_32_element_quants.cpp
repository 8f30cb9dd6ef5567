// Batched dots of the 32-element block types without a minimum (Q8_0, Q4_0, Q5_0): a register
// tile of R weight rows x B activation rows keeps R*B accumulators, so each weight block is
// decoded once per B activation rows and each activation block loaded once per R weight rows.
// Per block pair the inner loop spends one sign, maddubs + madd, one conversion, one scale
// product and one fma; the scale product multiplies the weight row's broadcast scale by the
// activation row's scale staged as eight equal floats. maddubs + madd bound it: about 40 GMAC/s
// a core on the AVX2 machine of docs/perf/cpu.md when nothing else runs, where these tiles reach
// about 31.
//
// The arithmetic per output is the one-row kernels' (and reference::dots'): lane-wise fma of
// d_w * d_a times the block's eight exact lane sums, summed with hsum8 at the end. Only the
// order of independent outputs changes, so the bits do not.
#include "cpu/x86/gemm_32_element_quants.hpp"

#include <immintrin.h>

#include <algorithm>

#include "cpu/x86/simd.hpp"
#include "cpu/x86/weight_blocks.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {
namespace {

// 4 x 3 measured best of 1x4, 2x4, 4x2, 3x3, 2x6 and 4x3 on Q8_0 (docs/kernels-cpu.md), although
// GCC keeps the three activation vectors in registers and so spills some accumulators: each then
// costs a load and a store per block pair. Measured faster all the same.
constexpr int kTileRows = 4;
constexpr int kTileBatch = 3;
// Blocks whose activation scales a tile stages at a time (16 x 3 x 32 bytes on the stack).
constexpr std::size_t kChunkBlocks = 16;

template <class W, int R, int B>
void tile(const reference::MatmulArgs& args, std::size_t activation_bytes, std::size_t r0,
          std::size_t b0) noexcept {
  static_assert(!W::kHasMin && !W::kUnsigned, "signed types without a minimum only");
  constexpr std::size_t kA = blocks::kActivationBytes<W>;
  const std::size_t n_blocks = args.columns / 32;
  const std::uint8_t* w[R];
  const std::uint8_t* a[B];
  simd::row_pointers(args.weights, args.row_bytes, r0, w);
  simd::row_pointers(args.activations, activation_bytes, b0, a);

  __m256 acc[R][B];
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) acc[r][b] = _mm256_setzero_ps();
  }
  alignas(32) float a_scales[kChunkBlocks][B][8];
  for (std::size_t k0 = 0; k0 < n_blocks; k0 += kChunkBlocks) {
    const std::size_t n = std::min(kChunkBlocks, n_blocks - k0);
    for (std::size_t k = 0; k < n; ++k) {
      for (int b = 0; b < B; ++b) {
        const __m128 d = simd::load_f16x2(a[b] + (k0 + k) * kA);
        _mm256_store_ps(a_scales[k][b], _mm256_broadcastss_ps(d));
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      for (int r = 0; r < R; ++r) {
        const std::uint8_t* block = w[r] + (k0 + k) * W::kBytes;
        const __m256i values = W::values(block);
        const __m256i magnitudes = _mm256_sign_epi8(values, values);
        const __m256 w_scale = _mm256_broadcastss_ps(simd::load_f16x2(block));
        for (int b = 0; b < B; ++b) {
          const __m256i a_values = simd::load_i8x32(a[b] + (k0 + k) * kA + kA - 32);
          // |w| . (a with w's signs) = w . a, in maddubs' unsigned x signed form.
          const __m256i signed_values = _mm256_sign_epi8(a_values, values);
          const __m256 isum = _mm256_cvtepi32_ps(simd::dot_u8_i8(magnitudes, signed_values));
          const __m256 d = _mm256_mul_ps(w_scale, _mm256_load_ps(a_scales[k][b]));
          acc[r][b] = _mm256_fmadd_ps(d, isum, acc[r][b]);
        }
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) args.y[(b0 + b) * args.rows + r0 + r] = simd::hsum8(acc[r][b]);
  }
}

// Tiles of R weight rows over every activation row: whole tiles of kTileBatch, then the rest.
template <class W, int R, int B = kTileBatch - 1>
void batch_tail(const reference::MatmulArgs& args, std::size_t activation_bytes, std::size_t r,
                std::size_t b) noexcept {
  if constexpr (B > 0) {
    if (args.batch - b == B) return tile<W, R, B>(args, activation_bytes, r, b);
    batch_tail<W, R, B - 1>(args, activation_bytes, r, b);
  }
}

template <class W, int R>
void row_tile(const reference::MatmulArgs& args, std::size_t activation_bytes,
              std::size_t r) noexcept {
  std::size_t b = 0;
  for (; b + kTileBatch <= args.batch; b += kTileBatch) {
    tile<W, R, kTileBatch>(args, activation_bytes, r, b);
  }
  batch_tail<W, R>(args, activation_bytes, r, b);
}

template <class W>
void gemm_rows(const reference::MatmulArgs& args, std::size_t row_begin,
               std::size_t row_end) noexcept {
  const std::size_t activation_bytes = args.columns / 32 * blocks::kActivationBytes<W>;
  std::size_t r = row_begin;
  for (; r + kTileRows <= row_end; r += kTileRows) {
    row_tile<W, kTileRows>(args, activation_bytes, r);
  }
  switch (row_end - r) {
    case 3:
      return row_tile<W, 3>(args, activation_bytes, r);
    case 2:
      return row_tile<W, 2>(args, activation_bytes, r);
    case 1:
      return row_tile<W, 1>(args, activation_bytes, r);
    default:
      return;
  }
}

}  // namespace

void q8_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept {
  gemm_rows<blocks::Q8_0W>(args, row_begin, row_end);
}
void q4_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept {
  gemm_rows<blocks::Q4_0W>(args, row_begin, row_end);
}
void q5_0_batched(const reference::MatmulArgs& args, std::size_t row_begin,
                  std::size_t row_end) noexcept {
  gemm_rows<blocks::Q5_0W>(args, row_begin, row_end);
}

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
