// Scalar definitions of the exp approximation, the horizontal sums and the f16 dot orders.
// Compiled with -ffp-contract=off: every fused multiply-add below is an explicit std::fma.
#include "reference/ops_arithmetic.hpp"

#include <bit>
#include <cmath>

#include "reference/half_precision.hpp"

namespace lpx::kernels::reference {

float exp_approx(float x) noexcept {
  namespace c = exp_approx_constants;
  // x = n ln2 + b with n = round(x log2e) (the shift trick leaves n in z's low mantissa bits)
  // and |b| <= ln2/2, reduced with a two-part ln2 so that b is nearly exact.
  const float z = std::fma(x, c::kLog2e, c::kShift);
  const float n = z - c::kShift;
  const float b = std::fma(-n, c::kLn2Lo, std::fma(-n, c::kLn2Hi, x));
  // 2^n as float bits, built by shifting n's integer bits into the exponent field (wrapping).
  const std::uint32_t e = std::bit_cast<std::uint32_t>(z) << 23;
  const float k = std::bit_cast<float>(e + c::kOneBits);
  // j = exp(b) - 1.
  const float u = b * b;
  const float j = std::fma(std::fma(std::fma(c::kC5, b, c::kC4), u, std::fma(c::kC3, b, c::kC2)), u,
                           c::kC1 * b);
  if (!(std::fabs(n) > c::kScaleLimit)) return std::fma(j, k, k);
  // |n| > 126: 2^n is not a normal float; scale in two steps, or saturate beyond |n| > 192.
  const std::uint32_t g = n <= 0.0f ? c::kNegativeBias : 0u;
  const float s1 = std::bit_cast<float>(g + c::kHalfScaleBits);
  if (std::fabs(n) > c::kRangeLimit) return s1 * s1;
  const float s2 = std::bit_cast<float>(e - g);
  return std::fma(s2, j, s2) * s1;
}

float silu_approx(float x) noexcept { return x / (1.0f + exp_approx(0.0f - x)); }

float silu_libm(float x) noexcept { return x / (1.0f + std::exp(-x)); }

float gelu_approx(float v) noexcept {
  const float minus_2u = (kGeluMinus2Root2OverPi * v) * (1.0f + (kGeluCubic * v) * v);
  return v / (1.0f + exp_approx(minus_2u));
}

float hsum8(const float* lanes) noexcept {
  float t[4];
  for (int i = 0; i < 4; ++i) t[i] = lanes[i] + lanes[i + 4];
  return (t[0] + t[2]) + (t[1] + t[3]);
}

float reduce_4x8(const float* acc) noexcept {
  float s[8];
  for (int l = 0; l < 8; ++l) s[l] = (acc[l] + acc[16 + l]) + (acc[8 + l] + acc[24 + l]);
  float t[4];
  for (int i = 0; i < 4; ++i) t[i] = s[i] + s[i + 4];
  return (t[0] + t[1]) + (t[2] + t[3]);
}

DotOrder qk_dot_order(std::uint32_t n_rows, std::uint32_t head_dim) noexcept {
  // The blocked kernel takes several rows and a dot length that is a multiple of 8.
  return n_rows >= 2 && head_dim % 8 == 0 ? DotOrder::k1x8 : DotOrder::k4x8;
}

DotOrder pv_dot_order(std::uint32_t n_rows, std::uint32_t head_dim) noexcept {
  // Here the dot length is the (padded) context and head_dim is the blocked kernel's row count,
  // which it needs to be a multiple of 4.
  return n_rows >= 2 && head_dim % 4 == 0 ? DotOrder::k1x8 : DotOrder::k4x8;
}

std::size_t dot_lanes(DotOrder order) noexcept { return order == DotOrder::k4x8 ? 32 : 8; }

float reduce_dot(DotOrder order, const float* acc) noexcept {
  return order == DotOrder::k4x8 ? reduce_4x8(acc) : hsum8(acc);
}

float dot_f16(DotOrder order, const float* x, const std::uint16_t* y, std::size_t n) noexcept {
  const std::size_t lanes = dot_lanes(order);
  const std::size_t whole = n - n % lanes;
  float acc[32] = {};
  for (std::size_t i = 0; i < whole; ++i) {
    acc[i % lanes] = std::fma(x[i], f16_to_f32(y[i]), acc[i % lanes]);
  }
  double sum = static_cast<double>(reduce_dot(order, acc));
  for (std::size_t i = whole; i < n; ++i) {  // k4x8 only: k1x8 is never asked for leftovers
    sum += static_cast<double>(x[i] * f16_to_f32(y[i]));
  }
  return static_cast<float>(sum);
}

}  // namespace lpx::kernels::reference
