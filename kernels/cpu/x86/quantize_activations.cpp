#include "cpu/x86/quantize_activations.hpp"

#include <immintrin.h>

#include <cstring>
#include <optional>

#include "cpu/x86/simd.hpp"
#include "reference/half_precision.hpp"
#include "reference/quantize_activations.hpp"

namespace lpx::kernels::LPX_X86_ISA {
namespace {

using reference::DotFormat;

void store_u16(std::uint8_t* p, std::uint16_t v) noexcept { std::memcpy(p, &v, 2); }

std::uint16_t to_f16(float v) noexcept {
  return static_cast<std::uint16_t>(_cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT));
}

// Four int32 vectors (elements 0-7, 8-15, 16-23, 24-31) narrowed with saturation to 32 int8 in
// element order: the packs work per 128-bit half, so a final permute restores the order.
__m256i narrow_to_i8(__m256i a, __m256i b, __m256i c, __m256i d) noexcept {
  const __m256i ab = _mm256_packs_epi32(a, b);
  const __m256i cd = _mm256_packs_epi32(c, d);
  const __m256i bytes = _mm256_packs_epi16(ab, cd);
  return _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
}

// One 32-float block of q8_0 (kSum = false) or q8_1 (kSum = true).
template <bool kSum>
void quantize_q8_block(const float* x, std::uint8_t* out) noexcept {
  __m256 v[4];
  const float max_scalar = simd::load_block_amax(x, v);
  const float d = max_scalar / 127.0f;
  const __m256 id = _mm256_set1_ps(max_scalar != 0.0f ? 127.0f / max_scalar : 0.0f);
  __m256i q[4];
  for (int i = 0; i < 4; ++i) {
    const __m256 scaled = _mm256_mul_ps(v[i], id);
    q[i] =
        _mm256_cvtps_epi32(_mm256_round_ps(scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  store_u16(out, to_f16(d));
  std::uint8_t* qs = out + 2;
  if constexpr (kSum) {
    const std::int32_t sum = simd::horizontal_sum(
        _mm256_add_epi32(_mm256_add_epi32(q[0], q[1]), _mm256_add_epi32(q[2], q[3])));
    store_u16(out + 2, to_f16(d * static_cast<float>(sum)));
    qs = out + 4;
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs), narrow_to_i8(q[0], q[1], q[2], q[3]));
}

void quantize_f16(const float* x, std::size_t n, std::uint8_t* out) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), h);
  }
  for (; i < n; ++i) store_u16(out + 2 * i, reference::f32_to_f16(x[i]));
}

// Round to nearest even on the bits: (x + 0x7FFF + lsb) >> 16; a NaN keeps its top bits and is
// made quiet.
void quantize_bf16(const float* x, std::size_t n, std::uint8_t* out) noexcept {
  const __m256i one = _mm256_set1_epi32(1);
  const __m256i bias = _mm256_set1_epi32(0x7FFF);
  const __m256i abs_mask = _mm256_set1_epi32(0x7FFFFFFF);
  const __m256i inf = _mm256_set1_epi32(0x7F800000);
  const __m256i quiet = _mm256_set1_epi32(0x40);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i high = _mm256_srli_epi32(u, 16);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, bias), _mm256_and_si256(high, one)), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i bits = _mm256_blendv_epi8(rounded, _mm256_or_si256(high, quiet), nan);
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(bits, bits), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 2 * i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) store_u16(out + 2 * i, reference::f32_to_bf16(x[i]));
}

// q8_k: the scale comes from the first element of largest magnitude (its sign included).
void quantize_q8_k_block(const float* x, std::uint8_t* out) noexcept {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  __m256 amax_v = _mm256_setzero_ps();
  for (int i = 0; i < 256; i += 8) {
    amax_v = _mm256_max_ps(amax_v, _mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)));
  }
  const float amax = simd::horizontal_max(amax_v);
  if (amax == 0.0f) {
    std::memset(out, 0, 292);
    return;
  }
  float max = 0.0f;
  const __m256 target = _mm256_set1_ps(amax);
  for (int i = 0; i < 256; i += 8) {
    const __m256 hit =
        _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), target, _CMP_EQ_OQ);
    const int mask = _mm256_movemask_ps(hit);
    if (mask != 0) {
      max = x[i + __builtin_ctz(static_cast<unsigned>(mask))];
      break;
    }
  }
  const float iscale = -127.0f / max;
  const __m256 scale = _mm256_set1_ps(iscale);
  const __m256 magic = _mm256_set1_ps(12582912.0f);  // 1.5 * 2^23: rounds to an integer
  const __m256i mantissa = _mm256_set1_epi32(0x007FFFFF);
  const __m256i offset = _mm256_set1_epi32(0x00400000);
  const __m256i cap = _mm256_set1_epi32(127);
  auto* qs = out + 4;
  for (int i = 0; i < 256; i += 32) {
    __m256i q[4];
    for (int k = 0; k < 4; ++k) {
      const __m256 shifted =
          _mm256_add_ps(_mm256_mul_ps(scale, _mm256_loadu_ps(x + i + 8 * k)), magic);
      const __m256i v =
          _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(shifted), mantissa), offset);
      q[k] = _mm256_min_epi32(v, cap);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(qs + i), narrow_to_i8(q[0], q[1], q[2], q[3]));
  }
  // bsums: 16-element sums, two per 32 bytes.
  const __m256i ones = _mm256_set1_epi16(1);
  for (int g = 0; g < 16; g += 2) {
    const __m256i bytes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 16 * g));
    const __m256i lo = _mm256_cvtepi8_epi16(_mm256_castsi256_si128(bytes));
    const __m256i hi = _mm256_cvtepi8_epi16(_mm256_extracti128_si256(bytes, 1));
    store_u16(out + 260 + 2 * g,
              static_cast<std::uint16_t>(simd::horizontal_sum(_mm256_madd_epi16(lo, ones))));
    store_u16(out + 262 + 2 * g,
              static_cast<std::uint16_t>(simd::horizontal_sum(_mm256_madd_epi16(hi, ones))));
  }
  const float d = 1.0f / iscale;
  std::memcpy(out, &d, 4);
}

void quantize_one_row(DotFormat format, const float* x, std::size_t n, std::uint8_t* out) noexcept {
  switch (format) {
    case DotFormat::f32:
      std::memcpy(out, x, n * sizeof(float));
      return;
    case DotFormat::f16:
      quantize_f16(x, n, out);
      return;
    case DotFormat::bf16:
      quantize_bf16(x, n, out);
      return;
    case DotFormat::q8_0:
      for (std::size_t b = 0; b < n / 32; ++b) quantize_q8_block<false>(x + 32 * b, out + 34 * b);
      return;
    case DotFormat::q8_1:
      for (std::size_t b = 0; b < n / 32; ++b) quantize_q8_block<true>(x + 32 * b, out + 36 * b);
      return;
    case DotFormat::q8_k:
      for (std::size_t b = 0; b < n / 256; ++b) quantize_q8_k_block(x + 256 * b, out + 292 * b);
      return;
  }
}

}  // namespace

void quantize_activations(std::int32_t weight_type, const float* x, std::size_t columns,
                          std::size_t batch, void* out) noexcept {
  const std::optional<DotFormat> format = reference::dot_format_of(weight_type);
  const std::size_t row_bytes = reference::activation_row_bytes(weight_type, columns);
  if (!format || row_bytes == 0) return;
  auto* dst = static_cast<std::uint8_t*>(out);
  for (std::size_t b = 0; b < batch; ++b) {
    quantize_one_row(*format, x + b * columns, columns, dst + b * row_bytes);
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA
