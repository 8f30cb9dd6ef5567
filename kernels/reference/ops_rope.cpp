// Rotary embedding, with the reference engine's rounding: the angle of pair i is built by
// repeated multiplication (theta_{i+1} = theta_i * base^(-2/n_rot), theta_0 = position), divided
// by the pair's frequency factor, times freq_scale; cos and sin come from the C library in f32,
// each times attn_factor; the rotation fuses one product of each output into an fma. n_rot 0
// rotates nothing (a NoPE layer).
#include <cmath>

#include "reference/ops.hpp"

namespace lpx::kernels::reference {

void rope_row(float* x, std::size_t heads, std::size_t head_dim, std::int32_t position,
              const lpx_rope_params& params) noexcept {
  const std::size_t pairs = params.n_rot / 2;
  if (pairs == 0) return;
  const float magnitude = params.attn_factor != 0.0f ? params.attn_factor : 1.0f;
  const bool neox = params.mode == LPX_ROPE_NEOX;
  const float theta_scale = std::pow(params.freq_base, -2.0f / static_cast<float>(params.n_rot));
  float theta = static_cast<float>(position);
  for (std::size_t i = 0; i < pairs; ++i) {
    const float factor = params.freq_factors != nullptr ? params.freq_factors[i] : 1.0f;
    const float angle = params.freq_scale * (theta / factor);
    const float c = std::cos(angle) * magnitude;
    const float s = std::sin(angle) * magnitude;
    theta *= theta_scale;
    const std::size_t first = neox ? i : 2 * i;
    const std::size_t second = neox ? i + pairs : 2 * i + 1;
    for (std::size_t h = 0; h < heads; ++h) {
      float* head = x + h * head_dim;
      const float x0 = head[first];
      const float x1 = head[second];
      head[first] = std::fma(x0, c, -(x1 * s));
      head[second] = std::fma(x0, s, x1 * c);
    }
  }
}

}  // namespace lpx::kernels::reference
