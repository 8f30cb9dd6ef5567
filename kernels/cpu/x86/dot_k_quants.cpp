// AVX2 dots of the 256-element K types (Q4_K, Q5_K, Q6_K, Q8_K) with q8_k activations, in the
// lane arrangement of reference::dots (see reference/vec_dot_k_quants.cpp). Each block's work
// is mostly integer (maddubs, then madd by the sub-block scales), so one weight row is dotted
// with one activation row at a time; with several activation rows the weight row stays in L1.
#include <immintrin.h>

#include <cmath>
#include <cstring>

#include "cpu/x86/dot_kernels.hpp"
#include "cpu/x86/k_scales.hpp"
#include "cpu/x86/simd.hpp"

namespace lpx::kernels::LPX_X86_ISA::kernels {
namespace {

constexpr std::size_t kQ8KBytes = 292;

float f32_at(const std::uint8_t* p) noexcept {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

__m256i load256(const std::uint8_t* p) noexcept { return simd::load_i8x32(p); }

// Lane k = mn[2k] * S[2k] + mn[2k+1] * S[2k+1], S[j] = the activation sum of sub-block j.
__m128i min_products(const KScalesAndMins& sm, const std::uint8_t* a) noexcept {
  const __m256i bsums = load256(a + 260);
  const __m128i sub_block_sums =
      _mm_hadd_epi16(_mm256_castsi256_si128(bsums), _mm256_extracti128_si256(bsums, 1));
  std::uint64_t mins;
  std::memcpy(&mins, sm.mn, 8);
  const __m128i mins16 = _mm_cvtepu8_epi16(_mm_cvtsi64_si128(static_cast<long long>(mins)));
  return _mm_madd_epi16(mins16, sub_block_sums);
}

// Q4_K (kFiveBit = false) and Q5_K.
template <bool kFiveBit>
float dot_k_4_or_5_bit(const std::uint8_t* w, const std::uint8_t* a,
                       std::size_t n_blocks) noexcept {
  constexpr std::size_t kBytes = kFiveBit ? 176 : 144;
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i bit4 = _mm256_set1_epi8(0x10);
  __m256 acc = _mm256_setzero_ps();
  __m128 acc_m = _mm_setzero_ps();
  float summs = 0.0f;
  for (std::size_t i = 0; i < n_blocks; ++i, w += kBytes, a += kQ8KBytes) {
    const float a_d = f32_at(a);
    const float d = a_d * simd::load_f16(w);
    const float dmin = -a_d * simd::load_f16(w + 2);
    const KScalesAndMins sm = unpack_k_scales(w + 4);
    const std::uint8_t* qs = w + (kFiveBit ? 48 : 16);
    const std::uint8_t* aq = a + 4;
    [[maybe_unused]] const __m256i high_bits = kFiveBit ? load256(w + 16) : _mm256_setzero_si256();

    __m256i sumi = _mm256_setzero_si256();
    for (int pair = 0; pair < 4; ++pair) {
      const __m256i packed = load256(qs + 32 * pair);
      __m256i q[2] = {_mm256_and_si256(packed, low4),
                      _mm256_and_si256(_mm256_srli_epi16(packed, 4), low4)};
      for (int h = 0; h < 2; ++h) {
        const int s = 2 * pair + h;
        if constexpr (kFiveBit) {
          const __m256i mask = _mm256_set1_epi8(static_cast<char>(1 << s));
          const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(high_bits, mask), mask);
          q[h] = _mm256_or_si256(q[h], _mm256_and_si256(set, bit4));
        }
        const __m256i products = _mm256_maddubs_epi16(q[h], load256(aq + 32 * s));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(products, _mm256_set1_epi16(sm.sc[s])));
      }
    }
    const __m128i prod = min_products(sm, a);
    if constexpr (kFiveBit) {
      const __m128i pairs = _mm_hadd_epi32(prod, prod);
      const int total = _mm_cvtsi128_si32(_mm_hadd_epi32(pairs, pairs));
      summs = std::fma(dmin, static_cast<float>(total), summs);
    } else {
      acc_m = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(prod), acc_m);
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  if constexpr (kFiveBit) return simd::hsum8(acc) + summs;
  acc_m = _mm_add_ps(acc_m, _mm_movehl_ps(acc_m, acc_m));
  acc_m = _mm_add_ss(acc_m, _mm_movehdup_ps(acc_m));
  return simd::hsum8(acc) + _mm_cvtss_f32(acc_m);
}

// Q6_K: each half of a block gives four groups of 32 six-bit values (0..63); the -32 offset is
// removed per lane with the bsums (lane l pairs sub-blocks 2l and 2l + 1).
float dot_q6_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n_blocks) noexcept {
  const __m256i low4 = _mm256_set1_epi8(0x0F);
  const __m256i low2 = _mm256_set1_epi8(0x03);
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t i = 0; i < n_blocks; ++i, w += 210, a += kQ8KBytes) {
    const float d = f32_at(a) * simd::load_f16(w + 208);
    const std::uint8_t* scales = w + 192;
    const std::uint8_t* aq = a + 4;
    __m256i sumi = _mm256_setzero_si256();
    for (int half = 0; half < 2; ++half) {
      const __m256i ql0 = load256(w + 64 * half);
      const __m256i ql1 = load256(w + 64 * half + 32);
      const __m256i qh = load256(w + 128 + 32 * half);
      const __m256i low[4] = {_mm256_and_si256(ql0, low4), _mm256_and_si256(ql1, low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql0, 4), low4),
                              _mm256_and_si256(_mm256_srli_epi16(ql1, 4), low4)};
      for (int g = 0; g < 4; ++g) {
        const __m256i high = _mm256_and_si256(_mm256_srli_epi16(qh, 2 * g), low2);
        const __m256i q = _mm256_or_si256(low[g], _mm256_slli_epi16(high, 4));
        const int sub_block = 8 * half + 2 * g;
        const __m256i scale =
            _mm256_set_m128i(_mm_set1_epi16(static_cast<std::int8_t>(scales[sub_block + 1])),
                             _mm_set1_epi16(static_cast<std::int8_t>(scales[sub_block])));
        const __m256i products = _mm256_maddubs_epi16(q, load256(aq + 128 * half + 32 * g));
        sumi = _mm256_add_epi32(sumi, _mm256_madd_epi16(products, scale));
      }
    }
    const __m256i scales16 =
        _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(scales)));
    const __m256i offset = _mm256_slli_epi32(_mm256_madd_epi16(load256(a + 260), scales16), 5);
    sumi = _mm256_sub_epi32(sumi, offset);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return simd::hsum8(acc);
}

float dot_q8_k(const std::uint8_t* w, const std::uint8_t* a, std::size_t n_blocks) noexcept {
  __m256 acc = _mm256_setzero_ps();
  for (std::size_t i = 0; i < n_blocks; ++i, w += kQ8KBytes, a += kQ8KBytes) {
    const float d = f32_at(a) * f32_at(w);
    __m256i sumi = _mm256_setzero_si256();
    for (int g = 0; g < 8; ++g) {
      sumi =
          _mm256_add_epi32(sumi, simd::dot_i8_i8(load256(w + 4 + 32 * g), load256(a + 4 + 32 * g)));
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(sumi), acc);
  }
  return simd::hsum8(acc);
}

template <float (*kDot)(const std::uint8_t*, const std::uint8_t*, std::size_t)>
void rows(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  const std::size_t n_blocks = args.columns / 256;
  const auto* weights = static_cast<const std::uint8_t*>(args.weights);
  const auto* activations = static_cast<const std::uint8_t*>(args.activations);
  for (std::size_t r = row_begin; r < row_end; ++r) {
    for (std::size_t b = 0; b < args.batch; ++b) {
      args.y[b * args.rows + r] =
          kDot(weights + r * args.row_bytes, activations + b * n_blocks * kQ8KBytes, n_blocks);
    }
  }
}

}  // namespace

void q4_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<dot_k_4_or_5_bit<false>>(args, row_begin, row_end);
}
void q5_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<dot_k_4_or_5_bit<true>>(args, row_begin, row_end);
}
void q6_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<dot_q6_k>(args, row_begin, row_end);
}
void q8_k(const Args& args, std::size_t row_begin, std::size_t row_end) noexcept {
  rows<dot_q8_k>(args, row_begin, row_end);
}

}  // namespace lpx::kernels::LPX_X86_ISA::kernels
