// GeGLU: out = gelu(gate) * up with the tanh approximation of GELU, each element on its own in
// f32 with the C library's tanhf: gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) v (1 + 0.044715 v^2))).
// No approximation of tanh and no lookup table: the definition CUDA reproduces (Gemma's
// feed-forward; lpx/kinds/transformer.h). geglu_approx is the same function through the
// reference's vector exp, which the CPU engines run (tanhf took 20 % of a Gemma 3 prompt).
//
// geglu_f16 is the same function at f16 precision, as llama.cpp's CPU backend computes it (and
// so what the cpu backends run with q8 activations, "llama.cpp's arithmetic"): the gate rounded
// to f16, gelu of that in f32 (the inner term fused, as its build computes it), rounded to f16
// again (llama.cpp reads it from a 64K-entry table of exactly those values), times up in f32; a
// gate <= -10 gives 0 and one >= 10 gives gate * up.
#include <array>
#include <cmath>
#include <cstdint>

#include "reference/half_precision.hpp"
#include "reference/ops_arithmetic.hpp"
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

void geglu_approx(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) out[i] = gelu_approx(gate[i]) * up[i];
}

namespace {

// gelu_tanh as llama.cpp's x86 builds evaluate it for their table: GCC contracts the inner
// 1 + 0.044715 x^2 into one fused multiply-add (and nothing else). Unfused, one f16 input of the
// 65536 (-1.9990234375, 0xBFFF, whose gelu lies on an f16 rounding midpoint) rounds the other
// way, and that single entry moves Gemma 3's logits by ~0.1 once a gate hits it.
float gelu_tanh_as_llama_cpp_table(float v) noexcept {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCubic = 0.044715f;
  return 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * v * std::fma(kCubic * v, v, 1.0f)));
}

// gelu at every f16 input, rounded to f16 and widened back: 256 KiB, built on first use.
const std::array<float, 1 << 16>& gelu_f16_table() {
  static const std::array<float, 1 << 16> table = [] {
    std::array<float, 1 << 16> values{};
    for (std::uint32_t bits = 0; bits < (1u << 16); ++bits) {
      const float x = f16_to_f32(static_cast<std::uint16_t>(bits));
      values[bits] = f16_to_f32(f32_to_f16(gelu_tanh_as_llama_cpp_table(x)));
    }
    return values;
  }();
  return table;
}

}  // namespace

void geglu_f16(const float* gate, const float* up, float* out, std::size_t n) noexcept {
  const std::array<float, 1 << 16>& table = gelu_f16_table();
  for (std::size_t i = 0; i < n; ++i) {
    const float g = gate[i];
    if (g <= -10.0f) {
      out[i] = 0.0f;
    } else if (g >= 10.0f) {
      out[i] = g * up[i];
    } else {
      out[i] = table[f32_to_f16(g)] * up[i];
    }
  }
}

}  // namespace lpx::kernels::reference
