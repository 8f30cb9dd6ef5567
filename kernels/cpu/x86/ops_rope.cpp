// Rotary embedding: cos and sin of up to kPairsPerPass pairs are computed once per row (the C
// library's cosf and sinf, as in the reference) and applied to every head 8 lanes at a time.
// Each output is fma(x0, c, -(x1 s)) or fma(x0, s, x1 c), as reference::rope_row rounds them;
// c and s carry attn_factor as the reference's do. n_rot 0 rotates nothing.
// Math comes from compiler builtins, not <cmath> (see ops_rms_norm.cpp).
#include <immintrin.h>

#include "cpu/x86/ops.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

constexpr std::size_t kPairsPerPass = 64;

// NORMAL mode: pairs (2i, 2i+1) interleaved; cs holds [c, s] per pair, ncs [-s, c]. With
// x0 duplicated into both lanes of a pair and x1 likewise, fma(x0, [c, s], x1 * [-s, c]) gives
// [fma(x0, c, -(x1 s)), fma(x0, s, x1 c)].
void rotate_interleaved(float* head, const float* cs, const float* ncs, std::size_t pairs) {
  const std::size_t dims = 2 * pairs;
  std::size_t j = 0;
  for (; j + 8 <= dims; j += 8) {
    const __m256 x = _mm256_loadu_ps(head + j);
    const __m256 x0 = _mm256_moveldup_ps(x);
    const __m256 x1 = _mm256_movehdup_ps(x);
    const __m256 rotated =
        _mm256_fmadd_ps(x0, _mm256_loadu_ps(cs + j), _mm256_mul_ps(x1, _mm256_loadu_ps(ncs + j)));
    _mm256_storeu_ps(head + j, rotated);
  }
  for (; j < dims; j += 2) {
    const float x0 = head[j];
    const float x1 = head[j + 1];
    head[j] = __builtin_fmaf(x0, cs[j], -(x1 * cs[j + 1]));
    head[j + 1] = __builtin_fmaf(x0, cs[j + 1], x1 * cs[j]);
  }
}

// NEOX mode: pairs (i, i + half) for i in [first, first + count); c and s indexed from first.
void rotate_halves(float* head, std::size_t half, std::size_t first, const float* c, const float* s,
                   std::size_t count) {
  float* lo = head + first;
  float* hi = head + first + half;
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 x0 = _mm256_loadu_ps(lo + i);
    const __m256 x1 = _mm256_loadu_ps(hi + i);
    const __m256 vc = _mm256_loadu_ps(c + i);
    const __m256 vs = _mm256_loadu_ps(s + i);
    _mm256_storeu_ps(lo + i, _mm256_fmsub_ps(x0, vc, _mm256_mul_ps(x1, vs)));
    _mm256_storeu_ps(hi + i, _mm256_fmadd_ps(x0, vs, _mm256_mul_ps(x1, vc)));
  }
  for (; i < count; ++i) {
    const float x0 = lo[i];
    const float x1 = hi[i];
    lo[i] = __builtin_fmaf(x0, c[i], -(x1 * s[i]));
    hi[i] = __builtin_fmaf(x0, s[i], x1 * c[i]);
  }
}

}  // namespace

void rope_row(float* x, std::size_t heads, std::size_t head_dim, std::int32_t position,
              const lpx_rope_params& params) noexcept {
  const std::size_t pairs = params.n_rot / 2;
  if (pairs == 0) return;
  const float magnitude = params.attn_factor != 0.0f ? params.attn_factor : 1.0f;
  const bool neox = params.mode == LPX_ROPE_NEOX;
  const float theta_scale =
      __builtin_powf(params.freq_base, -2.0f / static_cast<float>(params.n_rot));
  float theta = static_cast<float>(position);

  alignas(32) float c[kPairsPerPass];
  alignas(32) float s[kPairsPerPass];
  alignas(32) float cs[2 * kPairsPerPass];
  alignas(32) float ncs[2 * kPairsPerPass];
  for (std::size_t first = 0; first < pairs; first += kPairsPerPass) {
    const std::size_t count = pairs - first < kPairsPerPass ? pairs - first : kPairsPerPass;
    for (std::size_t i = 0; i < count; ++i) {
      const float factor = params.freq_factors != nullptr ? params.freq_factors[first + i] : 1.0f;
      const float angle = params.freq_scale * (theta / factor);
      c[i] = __builtin_cosf(angle) * magnitude;
      s[i] = __builtin_sinf(angle) * magnitude;
      theta *= theta_scale;
    }
    if (neox) {
      for (std::size_t h = 0; h < heads; ++h) {
        rotate_halves(x + h * head_dim, pairs, first, c, s, count);
      }
      continue;
    }
    for (std::size_t i = 0; i < count; ++i) {
      cs[2 * i] = c[i];
      cs[2 * i + 1] = s[i];
      ncs[2 * i] = -s[i];
      ncs[2 * i + 1] = c[i];
    }
    for (std::size_t h = 0; h < heads; ++h) {
      rotate_interleaved(x + h * head_dim + 2 * first, cs, ncs, count);
    }
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
