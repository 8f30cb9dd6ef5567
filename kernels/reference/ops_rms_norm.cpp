// RMSNorm, rounded as the reference engine rounds it: the squares in f32, their sum in double,
// the mean and the scale in f32, then (x * scale) * weight.
#include <cmath>

#include "reference/ops.hpp"

namespace lpx::kernels::reference {

void rms_norm_row(const float* x, const float* weight, float* out, std::size_t n,
                  float eps) noexcept {
  double sum = 0.0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (std::size_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * weight[i];
}

}  // namespace lpx::kernels::reference
