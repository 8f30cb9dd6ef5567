// SIMD int16-activation matmul (reference/matmul_i16.hpp) of the 32-element types (the K types:
// matmul_i16_super_blocks.cpp): per block, the weights as two vectors of 16 int16 (elements
// 0..15, 16..31; i16_weight_decoders.hpp) and two pmaddwd against the activations give the
// eight exact lane sums S_l of the reference; one conversion and one fma per block and output
// then round exactly as the reference does. One activation row (decode): four weight rows at a
// time, decoded in registers, sharing each activation load, each row prefetching its successor
// in the next tile (simd::prefetch_next_tile). Several (prompts, batches, drafts): activation
// rows in cache-sized chunks (in_cached_chunks); per chunk, kI16ScratchRows weight rows decoded
// once into scratch as int16 plus their scales, then register tiles against them; on AVX-512
// two weight rows per 512-bit vector by six activation rows (decoded_tile_pairs).
#include "cpu/x86/matmul_i16.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "cpu/x86/i16_prompt_tiles.hpp"
#include "cpu/x86/i16_weight_decoders.hpp"
#include "cpu/x86/matmul_i16_super_blocks.hpp"
#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"
#include "reference/matmul_i16_super_blocks.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using Args = reference::I16MatmulArgs;

using i16::BlockScale;
using i16::Decoder;
using i16::Int16Block;
using i16::load256;

// The eight lane sums S_l of one block: exact int32 (vpdpwssd adds without saturating: the
// same sums in one instruction fewer).
__m256i lane_sums(__m256i w_lo, __m256i w_hi, const std::uint8_t* a) noexcept {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpwssd_epi32(_mm256_madd_epi16(w_lo, load256(a + 8)), w_hi, load256(a + 40));
#else
  return _mm256_add_epi32(_mm256_madd_epi16(w_lo, load256(a + 8)), _mm256_madd_epi16(w_hi, load256(a + 40)));
#endif
}

constexpr std::size_t kPrefetchBytes = 1536;

void prefetch(const std::uint8_t* p) noexcept {
  _mm_prefetch(reinterpret_cast<const char*>(p + kPrefetchBytes), _MM_HINT_T0);
}

// --- one activation row: R weight rows decoded in registers --------------------------------------

template <std::int32_t kType, int R>
void single_row_tile(const Args& args, std::size_t r0) noexcept {
  using D = Decoder<kType>;
  const auto* a = static_cast<const std::uint8_t*>(args.x);
  const std::uint8_t* w[R];
  for (int i = 0; i < R; ++i) w[i] = static_cast<const std::uint8_t*>(args.weights) + (r0 + i) * args.row_bytes;
  __m256 acc[R];
  float m[R];
  for (int i = 0; i < R; ++i) {
    acc[i] = _mm256_setzero_ps();
    m[i] = 0.0f;
  }
  const std::size_t tile_bytes = R * args.row_bytes;
  for (std::size_t k = 0; k < args.columns / 32; ++k, a += reference::kI16BlockBytes) {
    const __m256 da = _mm256_broadcast_ss(reinterpret_cast<const float*>(a));
    for (int i = 0; i < R; ++i) {
      const std::uint8_t* p = w[i] + k * D::kBytes;
      simd::prefetch_next_tile(p, tile_bytes);
      const BlockScale scale = D::scale(p);
      const Int16Block b = D::values(p);
      const __m256 s = _mm256_cvtepi32_ps(lane_sums(b.lo, b.hi, a));
      // dw * da rounds as the scalar product does.
      acc[i] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(scale.d), da), s, acc[i]);
      if constexpr (D::kMin) m[i] = std::fma(scale.m, simd::load_f32(a + 4), m[i]);
    }
  }
  for (int i = 0; i < R; ++i) args.y[r0 + i] = D::kMin ? simd::hsum8(acc[i]) + m[i] : simd::hsum8(acc[i]);
}

template <std::int32_t kType>
void single_row(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  std::size_t r = row_begin;
  for (; r + 4 <= row_end; r += 4) single_row_tile<kType, 4>(args, r);
  for (; r < row_end; ++r) single_row_tile<kType, 1>(args, r);
}

// --- several activation rows: decoded weight rows in scratch -------------------------------------
// The decoded rows go in pairs (2q, 2q + 1), block by block: row 2q's elements 0..15, row
// 2q + 1's 0..15, row 2q's 16..31, row 2q + 1's 16..31, so one aligned 512-bit load gives a
// block half of both rows; then every row's d per block, then its m.

struct DecodedRows {
  std::uint8_t* base;  // 64-byte aligned
  std::size_t blocks;
  // Block k of the pair holding row i: 64 int16.
  std::int16_t* pair_block(std::size_t i, std::size_t k) const {
    return reinterpret_cast<std::int16_t*>(base + (i / 2 * blocks + k) * 128);
  }
  float* d(std::size_t i) const { return reinterpret_cast<float*>(base + kI16ScratchRows / 2 * blocks * 128) + i * blocks; }
  float* m(std::size_t i) const { return d(kI16ScratchRows) + i * blocks; }
};
static_assert(kI16ScratchRows % 2 == 0);

template <std::int32_t kType>
void decode_row(const std::uint8_t* w, const DecodedRows& out, std::size_t i) noexcept {
  using D = Decoder<kType>;
  for (std::size_t k = 0; k < out.blocks; ++k, w += D::kBytes) {
    const BlockScale scale = D::scale(w);
    prefetch(w);
    const Int16Block b = D::values(w);
    std::int16_t* values = out.pair_block(i, k) + 16 * (i % 2);
    _mm256_store_si256(reinterpret_cast<__m256i*>(values), b.lo);
    _mm256_store_si256(reinterpret_cast<__m256i*>(values + 32), b.hi);
    out.d(i)[k] = scale.d;
    if constexpr (D::kMin) out.m(i)[k] = scale.m;
  }
}

// Decoded weight row i (output row r) times activation rows b0..b0+B-1.
template <bool kMin, int B>
void decoded_tile(const Args& args, const DecodedRows& rows, std::size_t i, std::size_t r, std::size_t b0) noexcept {
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::uint8_t* a[B];
  for (int b = 0; b < B; ++b) a[b] = static_cast<const std::uint8_t*>(args.x) + (b0 + b) * x_bytes;
  __m256 acc[B];
  float m[B];
  for (int b = 0; b < B; ++b) {
    acc[b] = _mm256_setzero_ps();
    m[b] = 0.0f;
  }
  const float* d = rows.d(i);
  const float* mins = rows.m(i);
  for (std::size_t k = 0; k < rows.blocks; ++k) {
    const std::int16_t* values = rows.pair_block(i, k) + 16 * (i % 2);
    const __m256i lo = load256(values), hi = load256(values + 32);
    for (int b = 0; b < B; ++b) {
      const std::uint8_t* block = a[b] + k * reference::kI16BlockBytes;
      const __m256 s = _mm256_cvtepi32_ps(lane_sums(lo, hi, block));
      acc[b] = _mm256_fmadd_ps(_mm256_set1_ps(d[k] * simd::load_f32(block)), s, acc[b]);
      if constexpr (kMin) m[b] = std::fma(mins[k], simd::load_f32(block + 4), m[b]);
    }
  }
  for (int b = 0; b < B; ++b) args.y[(b0 + b) * args.rows + r] = kMin ? simd::hsum8(acc[b]) + m[b] : simd::hsum8(acc[b]);
}

#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
// GCC 12's 512-bit intrinsics pass an undefined vector as the masked-off source, which its
// uninitialized-use analysis reports (fixed in GCC 13): silenced for this block only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Two decoded weight rows per 512-bit vector (row 2q in the low half, 2q + 1 in the high half)
// against an activation block half broadcast to both halves: each half's lane l gets exactly
// decoded_tile's S_l and fma sequence, so the bits are the same, at twice the work per
// instruction and with no shuffles in the loop. kPairs pairs of weight rows (scratch rows i0..)
// x B activation rows (b0..); the _1 types' minimum terms go the B activation rows per 256-bit
// fma, each lane the scalar fma sequence of decoded_tile.
template <bool kMin, int kPairs, int B>
void decoded_tile_pairs(const Args& args, const DecodedRows& rows, std::size_t i0, std::size_t r0,
                        std::size_t b0) noexcept {
  static_assert(B <= 8);
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::uint8_t* a[B];
  for (int b = 0; b < B; ++b) a[b] = static_cast<const std::uint8_t*>(args.x) + (b0 + b) * x_bytes;
  __m512 acc[kPairs][B];
  __m256 m[2 * kPairs];  // the minimum terms of weight row i0 + i, lane b: activation row b0 + b
  for (int q = 0; q < kPairs; ++q) {
    for (int b = 0; b < B; ++b) acc[q][b] = _mm512_setzero_ps();
  }
  for (int i = 0; i < 2 * kPairs; ++i) m[i] = _mm256_setzero_ps();
#pragma GCC unroll 2
  for (std::size_t k = 0; k < rows.blocks; ++k) {
    const std::size_t offset = k * reference::kI16BlockBytes;
    __m512i w_lo[kPairs], w_hi[kPairs];
    __m512 dw[kPairs];
    for (int q = 0; q < kPairs; ++q) {
      const std::int16_t* values = rows.pair_block(i0 + 2 * q, k);
      w_lo[q] = _mm512_load_si512(values);
      w_hi[q] = _mm512_load_si512(values + 32);
      dw[q] = _mm512_insertf32x8(_mm512_set1_ps(rows.d(i0 + 2 * q)[k]), _mm256_set1_ps(rows.d(i0 + 2 * q + 1)[k]), 1);
    }
    for (int b = 0; b < B; ++b) {
      const std::uint8_t* block = a[b] + offset;
      const __m512i x_lo = _mm512_broadcast_i64x4(load256(block + 8));
      const __m512i x_hi = _mm512_broadcast_i64x4(load256(block + 40));
      const __m512 da = _mm512_set1_ps(simd::load_f32(block));
      for (int q = 0; q < kPairs; ++q) {
        const __m512 sums = _mm512_cvtepi32_ps(_mm512_dpwssd_epi32(_mm512_madd_epi16(w_lo[q], x_lo), w_hi[q], x_hi));
        acc[q][b] = _mm512_fmadd_ps(_mm512_mul_ps(dw[q], da), sums, acc[q][b]);
      }
    }
    if constexpr (kMin) {
      alignas(32) float s[8] = {};
      for (int b = 0; b < B; ++b) s[b] = simd::load_f32(a[b] + offset + 4);
      const __m256 sa = _mm256_load_ps(s);
      for (int i = 0; i < 2 * kPairs; ++i) m[i] = _mm256_fmadd_ps(_mm256_set1_ps(rows.m(i0 + i)[k]), sa, m[i]);
    }
  }
  for (int q = 0; q < kPairs; ++q) {
    for (int half = 0; half < 2; ++half) {
      alignas(32) float mins[8];
      _mm256_store_ps(mins, m[2 * q + half]);
      for (int b = 0; b < B; ++b) {
        const __m256 lanes = half == 0 ? _mm512_castps512_ps256(acc[q][b]) : _mm512_extractf32x8_ps(acc[q][b], 1);
        args.y[(b0 + b) * args.rows + r0 + 2 * q + half] = kMin ? simd::hsum8(lanes) + mins[b] : simd::hsum8(lanes);
      }
    }
  }
}
#pragma GCC diagnostic pop
#endif

// The prompt loop's pieces (i16_prompt_tiles.hpp).
template <std::int32_t kType>
struct Tiles {
  static constexpr bool kMin = Decoder<kType>::kMin;
  static void decode(const std::uint8_t* w, const DecodedRows& rows, std::size_t i) noexcept {
    decode_row<kType>(w, rows, i);
  }
  template <int B>
  static void row_tile(const Args& args, const DecodedRows& rows, std::size_t i, std::size_t r, std::size_t b0) noexcept {
    decoded_tile<kMin, B>(args, rows, i, r, b0);
  }
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
  template <int kPairs, int B>
  static void pair_tile(const Args& args, const DecodedRows& rows, std::size_t i0, std::size_t r0,
                        std::size_t b0) noexcept {
    decoded_tile_pairs<kMin, kPairs, B>(args, rows, i0, r0, b0);
  }
#endif
};

template <std::int32_t kType>
void rows_of(const Args& args, std::size_t row_begin, std::size_t row_end, void* scratch) noexcept {
  if (args.batch == 1) return single_row<kType>(args, row_begin, row_end);
  const DecodedRows rows{i16::aligned_scratch(scratch), args.columns / 32};
  in_cached_chunks(args, 12, [&](const Args& part) {
    i16::decoded_row_tiles<Tiles<kType>>(part, rows, row_begin, row_end);
  });
}

// Block of 32 at `values` rounded with `inverse` into q at out; returns the sum of q.
std::int32_t round_block(const __m256 (&values)[4], float inverse, std::uint8_t* out) noexcept {
  const __m256 id = _mm256_set1_ps(inverse);
  __m256i q[4];
  __m256i sum = _mm256_setzero_si256();
  for (int i = 0; i < 4; ++i) {
    q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(values[i], id));  // round half to even
    sum = _mm256_add_epi32(sum, q[i]);
  }
  // packs works per 128-bit half: [0-3, 8-11, 4-7, 12-15] until the permute.
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_permute4x64_epi64(_mm256_packs_epi32(q[0], q[1]), 0xD8));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 32),
                      _mm256_permute4x64_epi64(_mm256_packs_epi32(q[2], q[3]), 0xD8));
  return simd::horizontal_sum(sum);
}

}  // namespace

void quantize_i16_super_blocks(const float* x, std::size_t columns, std::size_t batch, void* out) noexcept {
  auto* bytes = static_cast<std::uint8_t*>(out);
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t k = 0; k < columns / 256; ++k, bytes += reference::kI16SuperBlockBytes) {
      const float* v = x + r * columns + 256 * k;
      __m256 values[8][4];
      float amax = 0.0f;
      for (int j = 0; j < 8; ++j) amax = std::fmax(amax, simd::load_block_amax(v + 32 * j, values[j]));
      const reference::I16Rounding rounding = reference::i16_rounding(amax);
      float header[8];  // s_j
      for (int j = 0; j < 8; ++j) {
        header[j] = rounding.d * static_cast<float>(round_block(values[j], rounding.inverse, bytes + 64 * j));
      }
      std::uint8_t* scales = bytes + reference::kI16SuperBlockScaleOffset;
      std::memcpy(scales, &rounding.d, 4);
      std::memcpy(scales + 4, header, sizeof header);
      std::memset(scales + 36, 0, reference::kI16SuperBlockBytes - reference::kI16SuperBlockScaleOffset - 36);
    }
  }
}

void quantize_activations_i16(std::int32_t type, const float* x, std::size_t columns, std::size_t batch,
                              void* out) noexcept {
  if (reference::i16_super_blocks(type)) return quantize_i16_super_blocks(x, columns, batch, out);
  auto* bytes = static_cast<std::uint8_t*>(out);
  for (std::size_t r = 0; r < batch; ++r) {
    for (std::size_t k = 0; k < columns / 32; ++k, bytes += reference::kI16BlockBytes) {
      __m256 values[4];
      const reference::I16Rounding rounding = reference::i16_rounding(simd::load_block_amax(x + r * columns + 32 * k, values));
      const float s = rounding.d * static_cast<float>(round_block(values, rounding.inverse, bytes + 8));
      std::memcpy(bytes, &rounding.d, 4);
      std::memcpy(bytes + 4, &s, 4);
    }
  }
}

void dot_rows_i16(const reference::I16MatmulArgs& args, std::size_t row_begin, std::size_t row_end,
                  void* scratch) noexcept {
  if (row_begin >= row_end || args.batch == 0) return;
  switch (args.type) {
    case LPX_TENSOR_Q8_0: return rows_of<LPX_TENSOR_Q8_0>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_0: return rows_of<LPX_TENSOR_Q4_0>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_1: return rows_of<LPX_TENSOR_Q4_1>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_0: return rows_of<LPX_TENSOR_Q5_0>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q5_1: return rows_of<LPX_TENSOR_Q5_1>(args, row_begin, row_end, scratch);
    case LPX_TENSOR_Q4_K:
    case LPX_TENSOR_Q5_K:
    case LPX_TENSOR_Q6_K: return dot_rows_i16_super_blocks(args, row_begin, row_end, scratch);
    default: return;
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
