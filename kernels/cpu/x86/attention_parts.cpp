#include "cpu/x86/attention_parts.hpp"

#include <immintrin.h>

#include "cpu/x86/ops_simd.hpp"

namespace lpx::kernels::LPX_X86_ISA::attention_parts {

void gather_slots(const lpx_attention_args& args, std::size_t first, std::size_t n,
                  float* slot_words) noexcept {
  std::size_t t = first;
  for (std::size_t b = first / args.block_size; t < n; ++b) {
    const auto base = static_cast<std::uint32_t>(args.block_table[b]) * args.block_size;
    for (std::uint32_t s = static_cast<std::uint32_t>(t % args.block_size);
         s < args.block_size && t < n; ++s, ++t) {
      const std::uint32_t value = base + s;
      std::memcpy(slot_words + t, &value, sizeof value);
    }
  }
}

void round_query(const float* q, float* out, std::size_t dim) noexcept {
  std::size_t d = 0;
  for (; d + 8 <= dim; d += 8) {
    _mm256_storeu_ps(out + d, ops_simd::round_to_f16(_mm256_loadu_ps(q + d)));
  }
  for (; d < dim; ++d) out[d] = _cvtsh_ss(_cvtss_sh(q[d], _MM_FROUND_TO_NEAREST_INT));
}

void softmax(float* w, std::size_t begin, std::size_t first, std::size_t n,
             float softcap) noexcept {
  if (softcap > 0.0f) {
    const float inverse = 1.0f / softcap;
    for (std::size_t t = first; t < n; ++t) w[t] = softcap * __builtin_tanhf(w[t] * inverse);
  }
  float max = w[first];
  for (std::size_t t = first + 1; t < n; ++t) max = max > w[t] ? max : w[t];
  const std::size_t padded = round_up(n, 8);
  for (std::size_t t = begin; t < first; ++t) w[t] = -__builtin_inff();  // exp_approx(-inf) == 0
  for (std::size_t t = n; t < padded; ++t) w[t] = -__builtin_inff();
  const __m256 vmax = _mm256_set1_ps(max);
  double sum = 0.0;
  for (std::size_t t = begin; t < padded; t += 8) {
    const __m256 y = ops_simd::exp_approx(_mm256_sub_ps(_mm256_loadu_ps(w + t), vmax));
    _mm256_storeu_ps(w + t, y);
    sum += static_cast<double>(ops_simd::hsum8(y));
  }
  const __m256 inv_sum = _mm256_set1_ps(static_cast<float>(1.0 / sum));
  for (std::size_t t = begin; t < padded; t += 8) {
    _mm256_storeu_ps(w + t, ops_simd::round_to_f16(_mm256_mul_ps(_mm256_loadu_ps(w + t), inv_sum)));
  }
}

}  // namespace lpx::kernels::LPX_X86_ISA::attention_parts
