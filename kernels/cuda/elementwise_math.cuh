// Per-element arithmetic that two kernels must compute identically: the RMSNorm scale, SiLU,
// GELU and the soft cap,
// used by the standalone kernels of ops.cu and by the gemv epilogues of gemv.cu that fuse them
// (a projection reading a normalised row, a gate/up projection writing SwiGLU). Private to
// kernels/cuda.
#pragma once

#include "cuda/device_math.cuh"

namespace lpx::kernels::cuda::detail {

// 1 / sqrt(mean + eps) for a row of n values whose squares (each rounded to f32) sum to
// `squares` (accumulated in double): reference::rms_norm's mean and scale, in f32.
__device__ inline float rms_scale(double squares, int n, float eps) {
  const auto mean = static_cast<float>(squares / static_cast<double>(n));
  return div_rn(1.0f, sqrt_rn(add_rn(mean, eps)));
}

// reference::silu_approx (the whole groups of 8 of a row) and reference::silu_libm (the rest:
// exp in double rounded to f32, the correctly rounded f32 exp, where the reference calls expf).
__device__ inline float silu_approx(float v) {
  return div_rn(v, add_rn(1.0f, exp_approx(0.0f - v)));
}
__device__ inline float silu_exact_exp(float v) {
  const auto e = static_cast<float>(exp(-static_cast<double>(v)));
  return div_rn(v, add_rn(1.0f, e));
}

// silu(gate) * up for element i of a row of n, as reference::swiglu computes it for that n.
__device__ inline float swiglu_element(float gate, float up, long long i, long long n) {
  const float silu = i < n - n % 8 ? silu_approx(gate) : silu_exact_exp(gate);
  return mul_rn(silu, up);
}

// tanh in double rounded to f32: the correctly rounded f32 tanh, where the reference calls the
// C library's tanhf (which may be one ulp off it for a few inputs).
__device__ inline float tanh_f32(float v) { return static_cast<float>(tanh(static_cast<double>(v))); }

// reference::gelu_tanh, operation by operation: 0.5 v (1 + tanh(sqrt(2/pi) v (1 + 0.044715 v v))).
__device__ inline float gelu_tanh(float v) {
  constexpr float kSqrt2OverPi = 0.79788456080286535588f;
  constexpr float kCubic = 0.044715f;
  const float inner = add_rn(1.0f, mul_rn(mul_rn(kCubic, v), v));
  const float t = tanh_f32(mul_rn(mul_rn(kSqrt2OverPi, v), inner));
  return mul_rn(mul_rn(0.5f, v), add_rn(1.0f, t));
}

// gelu_tanh(gate) * up, as reference::geglu computes each element.
__device__ inline float geglu_element(float gate, float up) { return mul_rn(gelu_tanh(gate), up); }

// softcap * tanh(v * (1 / softcap)), as the reference bends scores and logits.
__device__ inline float soft_cap(float v, float softcap) {
  return mul_rn(softcap, tanh_f32(mul_rn(v, div_rn(1.0f, softcap))));
}

}  // namespace lpx::kernels::cuda::detail
