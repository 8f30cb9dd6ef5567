// AVX2 dots of the 32-element block types (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) with q8_0 / q8_1
// activations. Per block the 32 weights become 32 bytes in element order; maddubs + madd give
// the eight exact lane sums of reference::dots (lane l = elements 4l..4l+3), accumulated with one
// fma per block. A tile covers R weight rows x B activation rows, so each weight block is
// unpacked once per B activations and each activation block loaded once per R rows.
#include <immintrin.h>

#include <type_traits>

#include "cpu/x86/dot_kernels.hpp"
#include "cpu/x86/gemm_32_element_quants.hpp"
#include "cpu/x86/simd.hpp"
#include "cpu/x86/weight_blocks.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {
namespace {

using blocks::kActivationBytes;
using blocks::Q4_0W;
using blocks::Q4_1W;
using blocks::Q5_0W;
using blocks::Q5_1W;
using blocks::Q8_0W;

// One tile: rows r0..r0+R-1 times activation rows b0..b0+B-1.
template <class W, int R, int B>
void tile(const Args& args, std::size_t activation_bytes, std::size_t r0, std::size_t b0) noexcept {
  constexpr std::size_t kA = kActivationBytes<W>;
  const std::size_t n_blocks = args.columns / 32;
  const std::uint8_t* w[R];
  const std::uint8_t* a[B];
  simd::row_pointers(args.weights, args.row_bytes, r0, w);
  simd::row_pointers(args.activations, activation_bytes, b0, a);

  __m256 acc[R][B];
  __m128 mins[R][B];  // lane 1 accumulates fma(m_w, s_a, .); the other lanes are ignored
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) {
      acc[r][b] = _mm256_setzero_ps();
      mins[r][b] = _mm_setzero_ps();
    }
  }
  for (std::size_t k = 0; k < n_blocks; ++k) {
    __m128 a_scales[B];
    __m256i a_values[B];
    for (int b = 0; b < B; ++b) {
      const std::uint8_t* block = a[b] + k * kA;
      a_scales[b] = simd::load_f16x2(block);
      a_values[b] = simd::load_i8x32(block + kA - 32);
    }
    for (int r = 0; r < R; ++r) {
      const std::uint8_t* block = w[r] + k * W::kBytes;
      // Decode: fetch the same block of the next tile's rows. A tile reads R short interleaved
      // streams (a 576-column Q8_0 row is 612 bytes), too short for the hardware prefetcher to
      // lock on; without this, large matrices ran at half the memory bandwidth.
      if constexpr (R == 1) {
        // One row streams linearly into the next: fetch a fixed distance ahead, which runs on
        // across row boundaries. (Also with several activation rows: without it a batch of two
        // decoded at 2.5x the time of one.)
        _mm_prefetch(reinterpret_cast<const char*>(block + 1536), _MM_HINT_T0);
      } else if constexpr (B == 1) {
        simd::prefetch_next_tile(block, R * args.row_bytes);
      }
      const __m256i values = W::values(block);
      const __m128 w_scales = simd::load_f16x2(block);
      const __m256i unsigned_values = W::kUnsigned ? values : _mm256_sign_epi8(values, values);
      for (int b = 0; b < B; ++b) {
        const __m256i signed_values =
            W::kUnsigned ? a_values[b] : _mm256_sign_epi8(a_values[b], values);
        const __m256 isum = _mm256_cvtepi32_ps(simd::dot_u8_i8(unsigned_values, signed_values));
        const __m256 d = _mm256_broadcastss_ps(_mm_mul_ss(w_scales, a_scales[b]));
        acc[r][b] = _mm256_fmadd_ps(d, isum, acc[r][b]);
        if constexpr (W::kHasMin) mins[r][b] = _mm_fmadd_ps(w_scales, a_scales[b], mins[r][b]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int b = 0; b < B; ++b) {
      float sum = simd::hsum8(acc[r][b]);
      if constexpr (W::kHasMin) sum += _mm_cvtss_f32(_mm_movehdup_ps(mins[r][b]));
      args.y[(b0 + b) * args.rows + r0 + r] = sum;
    }
  }
}

// Several activation rows of a type without a minimum: gemm_32_element_quants.hpp.
template <class W>
constexpr void (*kBatched)(const Args&, std::size_t, std::size_t) noexcept = nullptr;
template <>
constexpr void (*kBatched<Q8_0W>)(const Args&, std::size_t, std::size_t) noexcept = &q8_0_batched;
template <>
constexpr void (*kBatched<Q4_0W>)(const Args&, std::size_t, std::size_t) noexcept = &q4_0_batched;
template <>
constexpr void (*kBatched<Q5_0W>)(const Args&, std::size_t, std::size_t) noexcept = &q5_0_batched;

template <class W>
void rows(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  const std::size_t activation_bytes = args.columns / 32 * kActivationBytes<W>;
  if (args.batch == 1) {
    std::size_t r = row_begin;
    // Q8_0 is the cheapest to decode, so its decode is bound by memory: one row at a time
    // streams linearly (measured 107 -> 131 tokens/s on a Q8_0 SmolLM2). The 4-bit types spend
    // more per block and gain from sharing each activation load across four rows.
    if constexpr (!std::is_same_v<W, Q8_0W>) {
      for (; r + 4 <= row_end; r += 4) tile<W, 4, 1>(args, activation_bytes, r, 0);
    }
    for (; r < row_end; ++r) tile<W, 1, 1>(args, activation_bytes, r, 0);
    return;
  }
  if constexpr (!W::kHasMin) {
    static_assert(kBatched<W> != nullptr, "a type without a minimum needs its batched entry");
    kBatched<W>(args, row_begin, row_end);
  } else {
    // The second accumulator per output of the types with a minimum made 4 x 3 tiles slower
    // for them than these 1 x 4 ones (docs/kernels-cpu.md).
    for (std::size_t r = row_begin; r < row_end; ++r) {
      std::size_t b = 0;
      for (; b + 4 <= args.batch; b += 4) tile<W, 1, 4>(args, activation_bytes, r, b);
      switch (args.batch - b) {
        case 3:
          tile<W, 1, 3>(args, activation_bytes, r, b);
          break;
        case 2:
          tile<W, 1, 2>(args, activation_bytes, r, b);
          break;
        case 1:
          tile<W, 1, 1>(args, activation_bytes, r, b);
          break;
        default:
          break;
      }
    }
  }
}

}  // namespace

void q8_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<Q8_0W>(args, row_begin, row_end);
}
void q4_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<Q4_0W>(args, row_begin, row_end);
}
void q4_1(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<Q4_1W>(args, row_begin, row_end);
}
void q5_0(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<Q5_0W>(args, row_begin, row_end);
}
void q5_1(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<Q5_1W>(args, row_begin, row_end);
}

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
