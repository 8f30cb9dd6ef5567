// AVX2 dots of f32 / f16 / bf16 weights with activations of the same type, in both summation
// orders of reference/vec_dot_float_types.cpp: vec_dot (four accumulators over steps of 32,
// then a type-specific fold and scalar leftovers) and the tiled gemm order (one accumulator per
// output; tiles of 4 weight rows x 3 activation rows share their loads).
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "cpu/x86/dot_kernels.hpp"
#include "cpu/x86/simd.hpp"
#include "reference/half_precision.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {
namespace {

struct F32 {
  static constexpr std::size_t kBytes = 4;
  static __m256 load(const std::uint8_t* p) noexcept {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(p));
  }
  static float scalar(const std::uint8_t* p) noexcept {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
};
struct F16 {
  static constexpr std::size_t kBytes = 2;
  static __m256 load(const std::uint8_t* p) noexcept {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static float scalar(const std::uint8_t* p) noexcept {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return reference::f16_to_f32(v);
  }
};
struct BF16 {
  static constexpr std::size_t kBytes = 2;
  static __m256 load(const std::uint8_t* p) noexcept {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
  static float scalar(const std::uint8_t* p) noexcept {
    std::uint16_t v;
    std::memcpy(&v, p, 2);
    return reference::bf16_to_f32(v);
  }
};

template <class T>
void four_accumulators(const std::uint8_t* w, const std::uint8_t* a, std::size_t n,
                       __m256 (&s)[4]) noexcept {
  for (int j = 0; j < 4; ++j) s[j] = _mm256_setzero_ps();
  for (std::size_t i = 0; i + 32 <= n; i += 32) {
    for (std::size_t j = 0; j < 4; ++j) {
      const std::size_t offset = (i + 8 * j) * T::kBytes;
      s[j] = _mm256_fmadd_ps(T::load(w + offset), T::load(a + offset), s[j]);
    }
  }
}

// s0 += s2, s1 += s3, s0 += s1; t = low + high; (t0 + t1) + (t2 + t3).
float fold_pairwise(const __m256 (&s)[4]) noexcept {
  const __m256 s0 = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
  const __m128 t = _mm_add_ps(_mm256_castps256_ps128(s0), _mm256_extractf128_ps(s0, 1));
  const __m128 pairs = _mm_hadd_ps(t, t);
  return _mm_cvtss_f32(_mm_hadd_ps(pairs, pairs));
}

float vec_dot_f32(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  __m256 s[4];
  four_accumulators<F32>(w, a, n, s);
  float result = fold_pairwise(s);
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += F32::scalar(w + 4 * i) * F32::scalar(a + 4 * i);  // not fused (-ffp-contract=off)
  }
  return result;
}

float vec_dot_f16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  __m256 s[4];
  four_accumulators<F16>(w, a, n, s);
  auto result = static_cast<double>(fold_pairwise(s));
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += static_cast<double>(F16::scalar(w + 2 * i) * F16::scalar(a + 2 * i));
  }
  return static_cast<float>(result);
}

// (s0 + s2) + (s1 + s3); g = high + low; (g0 + g2) + (g1 + g3); leftovers in double.
float vec_dot_bf16(const std::uint8_t* w, const std::uint8_t* a, std::size_t n) noexcept {
  __m256 s[4];
  four_accumulators<BF16>(w, a, n, s);
  const __m256 c = _mm256_add_ps(_mm256_add_ps(s[0], s[2]), _mm256_add_ps(s[1], s[3]));
  __m128 g = _mm_add_ps(_mm256_extractf128_ps(c, 1), _mm256_castps256_ps128(c));
  g = _mm_add_ps(g, _mm_movehl_ps(g, g));
  g = _mm_add_ss(g, _mm_movehdup_ps(g));
  auto result = static_cast<double>(_mm_cvtss_f32(g));
  for (std::size_t i = n / 32 * 32; i < n; ++i) {
    result += static_cast<double>(BF16::scalar(w + 2 * i) * BF16::scalar(a + 2 * i));
  }
  return static_cast<float>(result);
}

// Tiled gemm order: RM weight rows x RN activation rows, one 8-lane accumulator per output.
template <class T, int RM, int RN>
void gemm_tile(const Args& args, std::size_t r0, std::size_t b0) noexcept {
  const std::uint8_t* w[RM];
  const std::uint8_t* a[RN];
  simd::row_pointers(args.weights, args.row_bytes, r0, w);
  simd::row_pointers(args.activations, args.columns * T::kBytes, b0, a);
  __m256 c[RN][RM];
  for (int j = 0; j < RN; ++j) {
    for (int i = 0; i < RM; ++i) c[j][i] = _mm256_setzero_ps();
  }
  for (std::size_t l = 0; l < args.columns; l += 8) {
    __m256 b[RN];
    for (int j = 0; j < RN; ++j) b[j] = T::load(a[j] + l * T::kBytes);
    for (int i = 0; i < RM; ++i) {
      const __m256 wv = T::load(w[i] + l * T::kBytes);
      for (int j = 0; j < RN; ++j) c[j][i] = _mm256_fmadd_ps(wv, b[j], c[j][i]);
    }
  }
  for (int j = 0; j < RN; ++j) {
    for (int i = 0; i < RM; ++i) args.y[(b0 + j) * args.rows + r0 + i] = simd::hsum8(c[j][i]);
  }
}

template <class T, int RM>
void gemm_rows(const Args& args, std::size_t r0) noexcept {
  std::size_t b = 0;
  for (; b + 3 <= args.batch; b += 3) gemm_tile<T, RM, 3>(args, r0, b);
  if (args.batch - b == 2) gemm_tile<T, RM, 2>(args, r0, b);
  if (args.batch - b == 1) gemm_tile<T, RM, 1>(args, r0, b);
}

template <class T, float (*kVecDot)(const std::uint8_t*, const std::uint8_t*, std::size_t)>
void rows(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  if (reference::uses_gemm_order(args.type, args.rows, args.columns, args.batch)) {
    std::size_t r = row_begin;
    for (; r + 4 <= row_end; r += 4) gemm_rows<T, 4>(args, r);
    for (; r < row_end; ++r) gemm_rows<T, 1>(args, r);
    return;
  }
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  const auto* activations = static_cast<const std::uint8_t*>(args.activations);
  const std::size_t activation_bytes = args.columns * T::kBytes;
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t b = 0; b < args.batch; ++b) {
      args.y[b * args.rows + r] =
          kVecDot(weights + r * args.row_bytes, activations + b * activation_bytes, args.columns);
    }
  }
}

}  // namespace

void f32(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<F32, vec_dot_f32>(args, row_begin, row_end);
}
void f16(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<F16, vec_dot_f16>(args, row_begin, row_end);
}
void bf16(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<BF16, vec_dot_bf16>(args, row_begin, row_end);
}

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
