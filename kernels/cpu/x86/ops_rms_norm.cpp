// RMSNorm: the sum of squares is one chain of double additions (its order is part of the
// result, so it stays sequential); the scaling is vectorised. Math comes from compiler builtins,
// not <cmath>: an inline std:: function compiled here with -mavx2 could be the copy the linker
// keeps for the portable code too.
#include <immintrin.h>

#include "cpu/x86/ops.hpp"

namespace lpx::kernels::LPX_X86_ISA {

void rms_norm_row(const float* x, const float* weight, float* out, std::size_t n,
                  float eps) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / __builtin_sqrtf(mean + eps);

  const __m256 vscale = _mm256_set1_ps(scale);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 scaled = _mm256_mul_ps(_mm256_loadu_ps(x + i), vscale);
    _mm256_storeu_ps(out + i, _mm256_mul_ps(scaled, _mm256_loadu_ps(weight + i)));
  }
  for (; i < n; ++i) out[i] = (x[i] * scale) * weight[i];
}

}  // namespace lpx::kernels::LPX_X86_ISA
