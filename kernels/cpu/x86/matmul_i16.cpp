// SIMD int16-activation matmul (reference/matmul_i16.hpp): per 32-element block, the weights
// as two vectors of 16 int16 (elements 0..15, 16..31; i16_weight_decoders.hpp) and two pmaddwd
// against the activations give the eight exact lane sums S_l of the reference; one conversion
// and one fma per block and output then round exactly as the reference does. One activation row
// (decode): four weight rows at a time, decoded in registers, sharing each activation load, each
// row prefetching its successor in the next tile (simd::prefetch_next_tile). Several (prompts,
// batches, drafts): kI16ScratchRows weight rows decoded once into scratch as int16 plus their
// scales, then every tile of up to four activation rows against each, the tile staying in L1;
// on AVX-512, two activation rows per 512-bit vector (decoded_tile_pairs).
#include "cpu/x86/matmul_i16.hpp"

#include <immintrin.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "cpu/x86/i16_weight_decoders.hpp"
#include "cpu/x86/matmul_i16_super_blocks.hpp"
#include "cpu/x86/simd.hpp"
#include "lpx/kinds/tensor.h"
#include "reference/matmul_i16_super_blocks.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using Args = reference::I16MatmulArgs;

using i16::BlockScales;
using i16::Decoder;
using i16::Int16Block;
using i16::load256;

float f32_at(const std::uint8_t* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

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
  const std::size_t stored_blocks = args.columns / (32 * D::kBlocks);
  const std::size_t tile_bytes = R * args.row_bytes;
  for (std::size_t k = 0; k < stored_blocks; ++k) {
    BlockScales<D::kBlocks> scales[R];
    for (int i = 0; i < R; ++i) D::scales(w[i] + k * D::kBytes, scales[i]);
#pragma GCC unroll 8
    for (int j = 0; j < D::kBlocks; ++j, a += reference::kI16BlockBytes) {
      const __m256 da = _mm256_broadcast_ss(reinterpret_cast<const float*>(a));
      for (int i = 0; i < R; ++i) {
        const std::uint8_t* p = w[i] + k * D::kBytes;
        if (64 * j < static_cast<int>(D::kBytes)) simd::prefetch_next_tile(p + 64 * j, tile_bytes);
        const Int16Block b = D::values(p, j);
        const __m256 s = _mm256_cvtepi32_ps(lane_sums(b.lo, b.hi, a));
        // dw * da rounds as the scalar product does.
        acc[i] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(scales[i].d[j]), da), s, acc[i]);
        if constexpr (D::kMin) m[i] = std::fma(scales[i].m[j], f32_at(a + 4), m[i]);
      }
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
// A decoded row: for each block 32 int16 (elements in order), then each block's d, then its m.

struct DecodedRows {
  std::uint8_t* base;
  std::size_t blocks;
  std::size_t row_bytes;  // i16_scratch_row_bytes
  std::int16_t* values(std::size_t i) const { return reinterpret_cast<std::int16_t*>(base + i * row_bytes); }
  float* d(std::size_t i) const { return reinterpret_cast<float*>(base + i * row_bytes + 64 * blocks); }
  float* m(std::size_t i) const { return d(i) + blocks; }
};

template <std::int32_t kType>
void decode_row(const std::uint8_t* w, const DecodedRows& out, std::size_t i) noexcept {
  using D = Decoder<kType>;
  std::int16_t* values = out.values(i);
  float* d = out.d(i);
  float* m = out.m(i);
  for (std::size_t k = 0; k < out.blocks / D::kBlocks; ++k, w += D::kBytes) {
    BlockScales<D::kBlocks> scales;
    D::scales(w, scales);
#pragma GCC unroll 8
    for (int j = 0; j < D::kBlocks; ++j, values += 32, ++d, ++m) {
      if (64 * j < static_cast<int>(D::kBytes)) prefetch(w + 64 * j);
      const Int16Block b = D::values(w, j);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(values), b.lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(values + 16), b.hi);
      *d = scales.d[j];
      if constexpr (D::kMin) *m = scales.m[j];
    }
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
  const std::int16_t* values = rows.values(i);
  const float* d = rows.d(i);
  const float* mins = rows.m(i);
  for (std::size_t k = 0; k < rows.blocks; ++k) {
    const __m256i lo = load256(values + 32 * k), hi = load256(values + 32 * k + 16);
    for (int b = 0; b < B; ++b) {
      const std::uint8_t* block = a[b] + k * reference::kI16BlockBytes;
      const __m256 s = _mm256_cvtepi32_ps(lane_sums(lo, hi, block));
      acc[b] = _mm256_fmadd_ps(_mm256_set1_ps(d[k] * f32_at(block)), s, acc[b]);
      if constexpr (kMin) m[b] = std::fma(mins[k], f32_at(block + 4), m[b]);
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

// Rows `low` and `high` of 32 bytes each as one 512-bit vector.
__m512i two_rows(const std::uint8_t* low, const std::uint8_t* high) noexcept {
  return _mm512_inserti64x4(_mm512_castsi256_si512(load256(low)), load256(high), 1);
}

// Two activation rows per 512-bit vector, b in the low half and b + 1 in the high half, against
// the weight block broadcast to both halves: each half's lane l gets exactly decoded_tile's S_l
// and fma sequence, so the bits are the same, at twice the work per instruction (Xeons with two
// 512-bit FMA units issue two 512-bit vector instructions a cycle; the 256-bit tile was bound by
// issue). The _1 types' minimum terms go four activation rows per 128-bit fma, each lane the
// scalar fma sequence of decoded_tile. R decoded weight rows (scratch rows i0..) x four
// activation rows (b0..b0+3).
template <bool kMin, int R>
void decoded_tile_pairs(const Args& args, const DecodedRows& rows, std::size_t i0, std::size_t r0,
                        std::size_t b0) noexcept {
  constexpr int kPairs = 2;
  const std::size_t x_bytes = reference::i16_row_bytes(args.columns);
  const std::uint8_t* a[2 * kPairs];
  for (int b = 0; b < 2 * kPairs; ++b) a[b] = static_cast<const std::uint8_t*>(args.x) + (b0 + b) * x_bytes;
  __m512 acc[R][kPairs];
  __m128 m[R];  // the minimum terms of the four activation rows, lane b: row b0 + b
  for (int i = 0; i < R; ++i) {
    for (int p = 0; p < kPairs; ++p) acc[i][p] = _mm512_setzero_ps();
    m[i] = _mm_setzero_ps();
  }
  for (std::size_t k = 0; k < rows.blocks; ++k) {
    const std::size_t offset = k * reference::kI16BlockBytes;
    __m512i x_lo[kPairs];
    __m512i x_hi[kPairs];
    __m512 da[kPairs];
    for (int p = 0; p < kPairs; ++p) {
      const std::uint8_t* low = a[2 * p] + offset;
      const std::uint8_t* high = a[2 * p + 1] + offset;
      x_lo[p] = two_rows(low + 8, high + 8);
      x_hi[p] = two_rows(low + 40, high + 40);
      da[p] = _mm512_insertf32x8(_mm512_set1_ps(f32_at(low)), _mm256_set1_ps(f32_at(high)), 1);
    }
    __m128 sa = _mm_setzero_ps();  // each activation block's s, lane b
    if constexpr (kMin) {
      sa = _mm_setr_ps(f32_at(a[0] + offset + 4), f32_at(a[1] + offset + 4), f32_at(a[2] + offset + 4),
                       f32_at(a[3] + offset + 4));
    }
    for (int i = 0; i < R; ++i) {
      const std::int16_t* values = rows.values(i0 + i) + 32 * k;
      const __m512i w_lo = _mm512_broadcast_i64x4(load256(values));
      const __m512i w_hi = _mm512_broadcast_i64x4(load256(values + 16));
      const __m512 dw = _mm512_set1_ps(rows.d(i0 + i)[k]);
      for (int p = 0; p < kPairs; ++p) {
        const __m512 sums = _mm512_cvtepi32_ps(_mm512_dpwssd_epi32(_mm512_madd_epi16(w_lo, x_lo[p]), w_hi, x_hi[p]));
        acc[i][p] = _mm512_fmadd_ps(_mm512_mul_ps(dw, da[p]), sums, acc[i][p]);
      }
      if constexpr (kMin) m[i] = _mm_fmadd_ps(_mm_set1_ps(rows.m(i0 + i)[k]), sa, m[i]);
    }
  }
  for (int i = 0; i < R; ++i) {
    alignas(16) float mins[4];
    _mm_store_ps(mins, m[i]);
    for (int p = 0; p < kPairs; ++p) {
      const float low = simd::hsum8(_mm512_castps512_ps256(acc[i][p]));
      const float high = simd::hsum8(_mm512_extractf32x8_ps(acc[i][p], 1));
      args.y[(b0 + 2 * p) * args.rows + r0 + i] = kMin ? low + mins[2 * p] : low;
      args.y[(b0 + 2 * p + 1) * args.rows + r0 + i] = kMin ? high + mins[2 * p + 1] : high;
    }
  }
}
#pragma GCC diagnostic pop
#endif

template <std::int32_t kType>
void several_rows(const Args& args, std::size_t row_begin, std::size_t row_end, void* scratch) noexcept {
  constexpr bool kMin = Decoder<kType>::kMin;
  const DecodedRows rows{static_cast<std::uint8_t*>(scratch), args.columns / 32, i16_scratch_row_bytes(args.columns)};
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  for (std::size_t r0 = row_begin; r0 < row_end; r0 += kI16ScratchRows) {
    const std::size_t n = r0 + kI16ScratchRows <= row_end ? kI16ScratchRows : row_end - r0;
    for (std::size_t i = 0; i < n; ++i) decode_row<kType>(weights + (r0 + i) * args.row_bytes, rows, i);
    std::size_t b = 0;
    for (; b + 4 <= args.batch; b += 4) {
#if defined(__AVX512F__) && defined(__AVX512VNNI__) && defined(__AVX512DQ__)
      // Eight weight rows per tile where there is no minimum; four for the _1 types, whose
      // minimum terms take registers too (eight measured 8 % slower for Q4_1, 4 % faster for
      // Q8_0).
      std::size_t i = 0;
      if constexpr (!kMin) {
        for (; i + 8 <= n; i += 8) decoded_tile_pairs<kMin, 8>(args, rows, i, r0 + i, b);
      }
      for (; i + 4 <= n; i += 4) decoded_tile_pairs<kMin, 4>(args, rows, i, r0 + i, b);
      for (; i < n; ++i) decoded_tile_pairs<kMin, 1>(args, rows, i, r0 + i, b);
#else
      for (std::size_t i = 0; i < n; ++i) decoded_tile<kMin, 4>(args, rows, i, r0 + i, b);
#endif
    }
    for (std::size_t i = 0; i < n; ++i) {
      switch (args.batch - b) {
        case 3: decoded_tile<kMin, 3>(args, rows, i, r0 + i, b); break;
        case 2: decoded_tile<kMin, 2>(args, rows, i, r0 + i, b); break;
        case 1: decoded_tile<kMin, 1>(args, rows, i, r0 + i, b); break;
        default: break;
      }
    }
  }
}

template <std::int32_t kType>
void rows_of(const Args& args, std::size_t row_begin, std::size_t row_end, void* scratch) noexcept {
  if (args.batch == 1) return single_row<kType>(args, row_begin, row_end);
  in_cached_chunks(args, 4, [&](const Args& part) { several_rows<kType>(part, row_begin, row_end, scratch); });
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
