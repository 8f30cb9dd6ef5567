// SIMD i16 matmul of the K types (Q4_K, Q5_K, Q6_K) against super-block activations
// (reference/matmul_i16.hpp): the sub-block scales go into the weight integers, so int32 lanes
// sum a whole span (256 elements; 128 for Q6_K) with one vpdpwssd (pmaddwd + add without VNNI)
// per 16 or 32 elements, and the float work is one conversion and one fma per span instead of
// three operations per 32 elements. One activation row (decode): four weight rows decoded in
// registers, 32 elements a vector on AVX-512. Several (prompts): i16_prompt_tiles.hpp's loop
// over weight rows decoded into scratch in pairs, tiles of two pairs by six activation rows.
#include "cpu/x86/matmul_i16_super_blocks.hpp"

#include <immintrin.h>

#include <cstring>

#include "cpu/x86/i16_prompt_tiles.hpp"
#include "cpu/x86/i16_super_block_decoders.hpp"
#include "cpu/x86/matmul_i16.hpp"
#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"

// GCC 12's 512-bit intrinsics pass an undefined vector as the masked-off source, which its
// uninitialized-use analysis reports (fixed in GCC 13).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using Args = reference::I16MatmulArgs;
using i16::Int16Block;
using i16::load256;
using i16::SuperBlockDecoder;
using i16::SuperBlockScales;
using reference::kI16SuperBlockBytes;
using reference::kI16SuperBlockScaleOffset;

// S += the lane sums of one 32-element block: w.lo against activations 0..15 at x, w.hi
// against 16..31.
__m256i accumulate(__m256i s, Int16Block w, const std::uint8_t* x) noexcept {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpwssd_epi32(_mm256_dpwssd_epi32(s, w.lo, load256(x)), w.hi, load256(x + 32));
#else
  return _mm256_add_epi32(s, _mm256_add_epi32(_mm256_madd_epi16(w.lo, load256(x)), _mm256_madd_epi16(w.hi, load256(x + 32))));
#endif
}

// --- one activation row: R weight rows decoded in registers --------------------------------------

template <std::int32_t kType, int R>
void single_row_tile(const Args& args, std::size_t r0) noexcept {
  using D = SuperBlockDecoder<kType>;
  const auto* x = static_cast<const std::uint8_t*>(args.x);
  const std::uint8_t* w[R];
  simd::row_pointers(args.weights, args.row_bytes, r0, w);
  __m256 acc[R], macc[R];
  for (int i = 0; i < R; ++i) acc[i] = macc[i] = _mm256_setzero_ps();
  const std::size_t tile_bytes = R * args.row_bytes;
  for (std::size_t k = 0; k < args.columns / 256; ++k, x += kI16SuperBlockBytes) {
    const float da = simd::load_f32(x + kI16SuperBlockScaleOffset);
    SuperBlockScales scales[R];
    for (int i = 0; i < R; ++i) {
      const std::uint8_t* p = w[i] + k * D::kBytes;
      for (std::size_t line = 0; line < D::kBytes; line += 64) simd::prefetch_next_tile(p + line, tile_bytes);
      D::scales(p, scales[i]);
    }
#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
    __m512i all_scales[R];
    for (int i = 0; i < R; ++i) all_scales[i] = _mm512_castsi256_si512(load256(scales[i].sc));
#endif
    for (int first = 0; first < 8; first += D::kSpanBlocks) {
#if defined(__AVX512BW__) && defined(__AVX512VNNI__)
      // Lanes 0..7 sum elements 0..15 of each block, lanes 8..15 elements 16..31: their sum
      // is the reference's lane.
      __m512i s[R];
      for (int i = 0; i < R; ++i) s[i] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int j = first; j < first + D::kSpanBlocks; ++j) {
        const __m512i xj = _mm512_loadu_si512(x + 64 * j);
        for (int i = 0; i < R; ++i) {
          const __m512i wj = D::values(w[i] + k * D::kBytes, i16::block_scale<kType>(scales[i], all_scales[i], j), j);
          s[i] = _mm512_dpwssd_epi32(s[i], wj, xj);
        }
      }
      for (int i = 0; i < R; ++i) {
        const __m256i lanes = _mm256_add_epi32(_mm512_castsi512_si256(s[i]), _mm512_extracti64x4_epi64(s[i], 1));
        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(scales[i].d * da), _mm256_cvtepi32_ps(lanes), acc[i]);
      }
#else
      __m256i s[R];
      for (int i = 0; i < R; ++i) s[i] = _mm256_setzero_si256();
#pragma GCC unroll 8
      for (int j = first; j < first + D::kSpanBlocks; ++j) {
        for (int i = 0; i < R; ++i) s[i] = accumulate(s[i], D::values(w[i] + k * D::kBytes, scales[i], j), x + 64 * j);
      }
      for (int i = 0; i < R; ++i) {
        acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(scales[i].d * da), _mm256_cvtepi32_ps(s[i]), acc[i]);
      }
#endif
    }
    if constexpr (D::kMin) {
      const __m256 sums = _mm256_loadu_ps(reinterpret_cast<const float*>(x + kI16SuperBlockScaleOffset + 4));
      for (int i = 0; i < R; ++i) macc[i] = _mm256_fmadd_ps(_mm256_load_ps(scales[i].mw), sums, macc[i]);
    }
  }
  for (int i = 0; i < R; ++i) {
    args.y[r0 + i] = D::kMin ? simd::hsum8(acc[i]) + simd::hsum8(macc[i]) : simd::hsum8(acc[i]);
  }
}

// --- several activation rows: decoded weight rows in scratch -------------------------------------
// The decoded rows go in pairs (2q, 2q + 1), block by block: row 2q's elements 0..15, row 2q + 1's
// 0..15, row 2q's 16..31, row 2q + 1's 16..31 (scales folded in), so one aligned 512-bit load
// gives a block half of both rows; then every row's dw per super-block, then its mw per block.

struct DecodedRows {
  std::uint8_t* base;  // 64-byte aligned
  std::size_t super_blocks;
  // Block (k, j) of the pair holding row i: 64 int16.
  std::int16_t* pair_block(std::size_t i, std::size_t k, int j) const {
    return reinterpret_cast<std::int16_t*>(base + (i / 2 * super_blocks * 8 + 8 * k + j) * 128);
  }
  float* d(std::size_t i) const {
    return reinterpret_cast<float*>(base + kI16ScratchRows / 2 * super_blocks * 1024) + i * super_blocks;
  }
  float* mw(std::size_t i) const { return d(kI16ScratchRows) + 8 * super_blocks * i; }
};
static_assert(kI16ScratchRows % 2 == 0);

template <std::int32_t kType>
void decode_row(const std::uint8_t* w, const DecodedRows& out, std::size_t i) noexcept {
  using D = SuperBlockDecoder<kType>;
  for (std::size_t k = 0; k < out.super_blocks; ++k, w += D::kBytes) {
    SuperBlockScales scales;
    D::scales(w, scales);
    out.d(i)[k] = scales.d;
    if constexpr (D::kMin) std::memcpy(out.mw(i) + 8 * k, scales.mw, sizeof scales.mw);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) {
      const Int16Block b = D::values(w, scales, j);
      std::int16_t* values = out.pair_block(i, k, j) + 16 * (i % 2);
      _mm256_store_si256(reinterpret_cast<__m256i*>(values), b.lo);
      _mm256_store_si256(reinterpret_cast<__m256i*>(values + 32), b.hi);
    }
  }
}

// Decoded weight row i (output row r) times activation rows b0..b0+B-1.
template <std::int32_t kType, int B>
void decoded_tile(const Args& args, const DecodedRows& rows, std::size_t i, std::size_t r, std::size_t b0) noexcept {
  using D = SuperBlockDecoder<kType>;
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::uint8_t* a[B];
  __m256 acc[B], macc[B];
  for (int b = 0; b < B; ++b) {
    a[b] = static_cast<const std::uint8_t*>(args.x) + (b0 + b) * x_bytes;
    acc[b] = macc[b] = _mm256_setzero_ps();
  }
  for (std::size_t k = 0; k < rows.super_blocks; ++k) {
    const std::size_t offset = k * kI16SuperBlockBytes;
    for (int first = 0; first < 8; first += D::kSpanBlocks) {
      __m256i s[B];
      for (int b = 0; b < B; ++b) s[b] = _mm256_setzero_si256();
      for (int j = first; j < first + D::kSpanBlocks; ++j) {
        const std::int16_t* values = rows.pair_block(i, k, j) + 16 * (i % 2);
        const Int16Block wj{load256(values), load256(values + 32)};
        for (int b = 0; b < B; ++b) s[b] = accumulate(s[b], wj, a[b] + offset + 64 * j);
      }
      for (int b = 0; b < B; ++b) {
        const float dd = rows.d(i)[k] * simd::load_f32(a[b] + offset + kI16SuperBlockScaleOffset);
        acc[b] = _mm256_fmadd_ps(_mm256_set1_ps(dd), _mm256_cvtepi32_ps(s[b]), acc[b]);
      }
    }
    if constexpr (D::kMin) {
      const __m256 mw = _mm256_loadu_ps(rows.mw(i) + 8 * k);
      for (int b = 0; b < B; ++b) {
        const __m256 sums = _mm256_loadu_ps(reinterpret_cast<const float*>(a[b] + offset + kI16SuperBlockScaleOffset + 4));
        macc[b] = _mm256_fmadd_ps(mw, sums, macc[b]);
      }
    }
  }
  for (int b = 0; b < B; ++b) {
    args.y[(b0 + b) * args.rows + r] = D::kMin ? simd::hsum8(acc[b]) + simd::hsum8(macc[b]) : simd::hsum8(acc[b]);
  }
}

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
__m512 two_halves(float low, float high) noexcept {
  return _mm512_insertf32x8(_mm512_set1_ps(low), _mm256_set1_ps(high), 1);
}

// Two decoded weight rows per 512-bit vector (row 2q in the low half, 2q + 1 in the high half)
// against an activation block half broadcast to both halves: each half's lanes are decoded_tile's,
// at twice the work per instruction, with no shuffles. kPairs pairs of weight rows (scratch rows
// i0..) x B activation rows (b0..); the minimums in a second pass, keeping the main loop's
// registers free.
template <std::int32_t kType, int kPairs, int B>
void decoded_tile_pairs(const Args& args, const DecodedRows& rows, std::size_t i0, std::size_t r0,
                        std::size_t b0) noexcept {
  using D = SuperBlockDecoder<kType>;
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::uint8_t* a[B];
  for (int b = 0; b < B; ++b) a[b] = static_cast<const std::uint8_t*>(args.x) + (b0 + b) * x_bytes;
  __m512 acc[kPairs][B];
  for (int q = 0; q < kPairs; ++q) {
    for (int b = 0; b < B; ++b) acc[q][b] = _mm512_setzero_ps();
  }
  for (std::size_t k = 0; k < rows.super_blocks; ++k) {
    const std::size_t offset = k * kI16SuperBlockBytes;
    for (int first = 0; first < 8; first += D::kSpanBlocks) {
      __m512i s[kPairs][B];
      for (int q = 0; q < kPairs; ++q) {
        for (int b = 0; b < B; ++b) s[q][b] = _mm512_setzero_si512();
      }
#pragma GCC unroll 8
      for (int j = first; j < first + D::kSpanBlocks; ++j) {
        __m512i w_lo[kPairs], w_hi[kPairs];
        for (int q = 0; q < kPairs; ++q) {
          const std::int16_t* values = rows.pair_block(i0 + 2 * q, k, j);
          w_lo[q] = _mm512_load_si512(values);
          w_hi[q] = _mm512_load_si512(values + 32);
        }
        for (int b = 0; b < B; ++b) {
          const __m512i x_lo = _mm512_broadcast_i64x4(load256(a[b] + offset + 64 * j));
          const __m512i x_hi = _mm512_broadcast_i64x4(load256(a[b] + offset + 64 * j + 32));
          for (int q = 0; q < kPairs; ++q) {
            s[q][b] = _mm512_dpwssd_epi32(_mm512_dpwssd_epi32(s[q][b], w_lo[q], x_lo), w_hi[q], x_hi);
          }
        }
      }
      for (int q = 0; q < kPairs; ++q) {
        const __m512 dw = two_halves(rows.d(i0 + 2 * q)[k], rows.d(i0 + 2 * q + 1)[k]);
        for (int b = 0; b < B; ++b) {
          const __m512 da = _mm512_set1_ps(simd::load_f32(a[b] + offset + kI16SuperBlockScaleOffset));
          acc[q][b] = _mm512_fmadd_ps(_mm512_mul_ps(dw, da), _mm512_cvtepi32_ps(s[q][b]), acc[q][b]);
        }
      }
    }
  }
  __m512 macc[kPairs][B];
  for (int q = 0; q < kPairs; ++q) {
    for (int b = 0; b < B; ++b) macc[q][b] = _mm512_setzero_ps();
  }
  if constexpr (D::kMin) {
    for (std::size_t k = 0; k < rows.super_blocks; ++k) {
      const std::size_t sums = k * kI16SuperBlockBytes + kI16SuperBlockScaleOffset + 4;
      for (int q = 0; q < kPairs; ++q) {
        const __m512 mw = _mm512_insertf32x8(_mm512_castps256_ps512(_mm256_loadu_ps(rows.mw(i0 + 2 * q) + 8 * k)),
                                             _mm256_loadu_ps(rows.mw(i0 + 2 * q + 1) + 8 * k), 1);
        for (int b = 0; b < B; ++b) {
          const __m512 s = _mm512_broadcast_f32x8(_mm256_loadu_ps(reinterpret_cast<const float*>(a[b] + sums)));
          macc[q][b] = _mm512_fmadd_ps(mw, s, macc[q][b]);
        }
      }
    }
  }
  for (int q = 0; q < kPairs; ++q) {
    for (int b = 0; b < B; ++b) {
      for (int half = 0; half < 2; ++half) {
        const __m256 lanes = half == 0 ? _mm512_castps512_ps256(acc[q][b]) : _mm512_extractf32x8_ps(acc[q][b], 1);
        const __m256 mins = half == 0 ? _mm512_castps512_ps256(macc[q][b]) : _mm512_extractf32x8_ps(macc[q][b], 1);
        args.y[(b0 + b) * args.rows + r0 + 2 * q + half] =
            D::kMin ? simd::hsum8(lanes) + simd::hsum8(mins) : simd::hsum8(lanes);
      }
    }
  }
}
#endif

// The prompt loop's pieces (i16_prompt_tiles.hpp).
template <std::int32_t kType>
struct Tiles {
  static void decode(const std::uint8_t* w, const DecodedRows& rows, std::size_t i) noexcept {
    decode_row<kType>(w, rows, i);
  }
  template <int B>
  static void row_tile(const Args& args, const DecodedRows& rows, std::size_t i, std::size_t r, std::size_t b0) noexcept {
    decoded_tile<kType, B>(args, rows, i, r, b0);
  }
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
  template <int kPairs, int B>
  static void pair_tile(const Args& args, const DecodedRows& rows, std::size_t i0, std::size_t r0,
                        std::size_t b0) noexcept {
    decoded_tile_pairs<kType, kPairs, B>(args, rows, i0, r0, b0);
  }
#endif
};

template <std::int32_t kType>
void rows_of(const Args& args, std::size_t row_begin, std::size_t row_end, void* scratch) noexcept {
  if (args.batch > 1) {
    const DecodedRows rows{i16::aligned_scratch(scratch), args.columns / 256};
    return in_cached_chunks(args, 12, [&](const Args& part) {
      i16::decoded_row_tiles<Tiles<kType>>(part, rows, row_begin, row_end);
    });
  }
  std::size_t r = row_begin;
  for (; r + 4 <= row_end; r += 4) single_row_tile<kType, 4>(args, r);
  for (; r < row_end; ++r) single_row_tile<kType, 1>(args, r);
}

}  // namespace

void dot_rows_i16_super_blocks(const reference::I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                               void* scratch) noexcept {
  switch (args.type) {
    case LPX_TENSOR_Q4_K: return rows_of<LPX_TENSOR_Q4_K>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_K: return rows_of<LPX_TENSOR_Q5_K>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q6_K: return rows_of<LPX_TENSOR_Q6_K>(args, row_begin, row_end, scratch);
    default: return;
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
