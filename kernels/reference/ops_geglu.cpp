// GeGLU: out = gelu(gate) * up with the tanh approximation of GELU, each element on its own in
// f32 with the C library's tanhf: gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) v (1 + 0.044715 v^2))).
// No approximation of tanh and no lookup table: this is the definition the other backends
// reproduce (Gemma's feed-forward; lpx/kinds/transformer.h).
#include <cmath>

#include "reference/ops.hpp"

namespace lpx::kernels::reference {

float gelu_tanh(float v) noexcept {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCubic = 0.044715f;
  return 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * (1.0f + kCubic * v * v)));
}

void geglu(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = gelu_tanh(gate[i]) * up[i];
}

}  // namespace lpx::kernels::reference
