// Small AVX2 helpers shared by the matmul kernels. Internal to kernels/cpu/x86 (compiled per ISA level,
// see cpu/kernel_set.hpp).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace lpx::kernels::LPX_X86_ISA::simd {

// The largest of eight floats (no NaN).
inline float horizontal_max(__m256 v) noexcept {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

// The 32 floats at x into v[0..3], and the largest magnitude among them (no NaN).
inline float load_block_amax(const float* x, __m256 (&v)[4]) noexcept {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int i = 0; i < 4; ++i) {
    v[i] = _mm256_loadu_ps(x + 8 * i);
    amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign, v[i]));
  }
  return horizontal_max(amax);
}

// The sum of eight int32 (exact while it fits).
inline std::int32_t horizontal_sum(__m256i v) noexcept {
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  s = _mm_add_epi32(s, _mm_unpackhi_epi64(s, s));
  s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
  return _mm_cvtsi128_si32(s);
}

// ((a0 + a4) + (a2 + a6)) + ((a1 + a5) + (a3 + a7)): reference::dots::hsum8, in registers.
inline float hsum8(__m256 v) noexcept {
  __m128 r = _mm_add_ps(_mm256_extractf128_ps(v, 1), _mm256_castps256_ps128(v));
  r = _mm_add_ps(r, _mm_movehl_ps(r, r));
  r = _mm_add_ss(r, _mm_movehdup_ps(r));
  return _mm_cvtss_f32(r);
}

// out[i] = the first byte of row first + i of a matrix whose rows are `row_bytes` apart: the rows
// one register tile reads.
template <int N>
inline void row_pointers(const void* matrix, std::size_t row_bytes, std::size_t first,
                         const std::uint8_t* (&out)[N]) noexcept {
  const auto* bytes = static_cast<const std::uint8_t*>(matrix);
  for (int i = 0; i < N; ++i) out[i] = bytes + (first + static_cast<std::size_t>(i)) * row_bytes;
}

// Decode kernels read a tile of R adjacent weight rows as R short interleaved streams, too short
// for the hardware prefetcher to lock on, and a fixed distance ahead of a row lands in the tile's
// own rows once rows are long: each row fetches the same place in the next tile (R rows on), a
// whole tile of work ahead. `tile_bytes` = R x row bytes.
inline void prefetch_next_tile(const std::uint8_t* p, std::size_t tile_bytes) noexcept {
  _mm_prefetch(reinterpret_cast<const char*>(p + tile_bytes), _MM_HINT_T0);
}

inline std::uint32_t load_u32(const std::uint8_t* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

inline float load_f32(const std::uint8_t* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// One f16 value as f32.
inline float load_f16(const std::uint8_t* p) noexcept {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return _cvtsh_ss(v);
}

// Two consecutive f16 values as f32 in lanes 0 and 1 (lanes 2 and 3 are zero). Reads 4 bytes.
inline __m128 load_f16x2(const std::uint8_t* p) noexcept {
  return _mm_cvtph_ps(_mm_cvtsi32_si128(static_cast<int>(load_u32(p))));
}

inline __m256i load_i8x32(const std::uint8_t* p) noexcept {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

// 16 bytes of packed 4-bit values as 32 bytes in element order: low nibbles are elements 0..15,
// high nibbles 16..31.
inline __m256i nibbles(const std::uint8_t* p) noexcept {
  const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

// Byte i is 0xFF when bit i of the 32 bits at p is set, else 0.
inline __m256i expand_bits(const std::uint8_t* p) noexcept {
  const __m256i bits = _mm256_set1_epi32(static_cast<int>(load_u32(p)));
  const __m256i spread =
      _mm256_shuffle_epi8(bits, _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2,
                                                 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

// Sum of products of 32 unsigned (u) and 32 signed (s) bytes in eight int32 lanes, lane l
// holding bytes 4l..4l+3. Exact while each pair of products fits in int16.
inline __m256i dot_u8_i8(__m256i u, __m256i s) noexcept {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  // One instruction, the same sums: vpdpbusd adds the four products in 32 bits, which equals
  // maddubs + madd wherever maddubs' int16 pairs do not saturate (this function's contract).
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), u, s);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1));
#endif
}

// The same for two signed operands (neither byte of `b` may be -128).
inline __m256i dot_i8_i8(__m256i a, __m256i b) noexcept {
  return dot_u8_i8(_mm256_sign_epi8(a, a), _mm256_sign_epi8(b, a));
}

}  // namespace lpx::kernels::LPX_X86_ISA::simd
