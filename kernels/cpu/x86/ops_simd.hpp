// 8-lane building blocks of the AVX2 decode-step kernels, lane for lane the scalar definitions
// of reference/ops_arithmetic.hpp. Include only from translation units compiled with
// -mavx2 -mfma -mf16c (these inline functions must never get a copy compiled without them, nor
// may a reference header's inline function get a copy compiled with them).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::LPX_X86_ISA::ops_simd {

inline __m256 splat(float value) { return _mm256_set1_ps(value); }

inline __m256i splat_bits(std::uint32_t bits) { return _mm256_set1_epi32(static_cast<int>(bits)); }

// reference::exp_approx on 8 lanes.
inline __m256 exp_approx(__m256 x) {
  namespace c = reference::exp_approx_constants;
  const __m256 z = _mm256_fmadd_ps(x, splat(c::kLog2e), splat(c::kShift));
  const __m256 n = _mm256_sub_ps(z, splat(c::kShift));
  const __m256 b = _mm256_fnmadd_ps(n, splat(c::kLn2Lo), _mm256_fnmadd_ps(n, splat(c::kLn2Hi), x));
  const __m256i e = _mm256_slli_epi32(_mm256_castps_si256(z), 23);
  const __m256 k = _mm256_castsi256_ps(_mm256_add_epi32(e, splat_bits(c::kOneBits)));
  const __m256 u = _mm256_mul_ps(b, b);
  const __m256 j =
      _mm256_fmadd_ps(_mm256_fmadd_ps(_mm256_fmadd_ps(splat(c::kC5), b, splat(c::kC4)), u,
                                      _mm256_fmadd_ps(splat(c::kC3), b, splat(c::kC2))),
                      u, _mm256_mul_ps(splat(c::kC1), b));
  const __m256 normal = _mm256_fmadd_ps(j, k, k);
  const __m256 abs_n = _mm256_andnot_ps(splat(-0.0f), n);
  const __m256 special = _mm256_cmp_ps(abs_n, splat(c::kScaleLimit), _CMP_GT_OQ);
  if (_mm256_movemask_ps(special) == 0) return normal;
  // Some lane has |n| > 126: build 2^n from two factors there, saturate beyond |n| > 192.
  const __m256i g =
      _mm256_and_si256(_mm256_castps_si256(_mm256_cmp_ps(n, _mm256_setzero_ps(), _CMP_LE_OQ)),
                       splat_bits(c::kNegativeBias));
  const __m256 s1 = _mm256_castsi256_ps(_mm256_add_epi32(g, splat_bits(c::kHalfScaleBits)));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_sub_epi32(e, g));
  const __m256 scaled = _mm256_mul_ps(_mm256_fmadd_ps(s2, j, s2), s1);
  const __m256 saturated = _mm256_cmp_ps(abs_n, splat(c::kRangeLimit), _CMP_GT_OQ);
  const __m256 result = _mm256_blendv_ps(normal, scaled, special);
  return _mm256_blendv_ps(result, _mm256_mul_ps(s1, s1), saturated);
}

// reference::silu_approx on 8 lanes.
inline __m256 silu_approx(__m256 x) {
  const __m256 e = exp_approx(_mm256_sub_ps(_mm256_setzero_ps(), x));
  return _mm256_div_ps(x, _mm256_add_ps(splat(1.0f), e));
}

// reference::gelu_approx on 8 lanes.
inline __m256 gelu_approx(__m256 v) {
  const __m256 cubic = _mm256_mul_ps(_mm256_mul_ps(splat(reference::kGeluCubic), v), v);
  const __m256 minus_2u =
      _mm256_mul_ps(_mm256_mul_ps(splat(reference::kGeluMinus2Root2OverPi), v), _mm256_add_ps(splat(1.0f), cubic));
  return _mm256_div_ps(v, _mm256_add_ps(splat(1.0f), exp_approx(minus_2u)));
}

// The two 128-bit halves added: t[i] = v[i] + v[i + 4].
inline __m128 fold_halves(__m256 v) {
  return _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
}

// reference::hsum8.
inline float hsum8(__m256 v) {
  __m128 t = fold_halves(v);
  t = _mm_add_ps(t, _mm_movehl_ps(t, t));  // t0+t2, t1+t3
  t = _mm_add_ss(t, _mm_movehdup_ps(t));   // (t0+t2) + (t1+t3)
  return _mm_cvtss_f32(t);
}

// Eight f16 values widened to f32.
inline __m256 load_f16(const std::uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Rounds 8 lanes to f16 (to nearest, ties to even) and back to f32.
inline __m256 round_to_f16(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

}  // namespace lpx::kernels::LPX_X86_ISA::ops_simd
