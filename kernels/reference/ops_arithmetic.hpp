// The exact arithmetic building blocks behind reference/ops.hpp: the vector exp approximation
// that the reference engine's softmax and SiLU use, its horizontal sums, and the two summation
// orders of its f16 dot products. Every vectorised kernel reproduces these lane by lane; the
// scalar definitions live in ops_arithmetic.cpp (compiled once, without any -m flags, so SIMD
// translation units can call them without an ODR clash between differently compiled copies).
//
// Thread-safety: no state; callable from any thread. No allocation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lpx::kernels::reference {

// Constants of the exp approximation (the single-precision algorithm of Arm's optimized-routines:
// at most ~1.95 ulp from exp; results overflow to +inf above ~88.38, flush to 0 below ~-103.97,
// and exp(-inf) is exactly 0). Shared with the SIMD versions so every copy uses the same bits.
namespace exp_approx_constants {
inline constexpr float kShift = 0x1.8p23f;  // adding it rounds to an integer
inline constexpr float kLog2e = 0x1.715476p+0f;
inline constexpr float kLn2Hi = 0x1.62e4p-1f;  // ln 2 split in two for an exact reduction
inline constexpr float kLn2Lo = 0x1.7f7d1cp-20f;
inline constexpr float kC1 = 0x1.ffffecp-1f;  // exp(b) ~ 1 + C1 b + C2 b^2 + ... + C5 b^5
inline constexpr float kC2 = 0x1.fffdb6p-2f;
inline constexpr float kC3 = 0x1.555e66p-3f;
inline constexpr float kC4 = 0x1.573e2ep-5f;
inline constexpr float kC5 = 0x1.0e4020p-7f;
inline constexpr float kScaleLimit = 126.0f;  // |n| above: 2^n is built from two factors
inline constexpr float kRangeLimit = 192.0f;  // |n| above: the result is 0 or +inf
inline constexpr std::uint32_t kOneBits = 0x3F800000u;
inline constexpr std::uint32_t kNegativeBias = 0x82000000u;
inline constexpr std::uint32_t kHalfScaleBits = 0x7F000000u;
}  // namespace exp_approx_constants

// One lane of the vector exp approximation (not std::exp: it differs by up to ~2 ulp).
float exp_approx(float x) noexcept;

// silu(x) = x / (1 + exp_approx(0 - x)): the vectorised SiLU of the reference engine.
float silu_approx(float x) noexcept;

// silu(x) = x / (1 + std::exp(-x)): what the reference engine uses for the n % 8 tail elements.
float silu_libm(float x) noexcept;

// GELU's tanh form through the same exp: 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)), with
// -2u = (kGeluMinus2Root2OverPi * v) * (1 + (kGeluCubic * v) * v), then
// v / (1 + exp_approx(-2u)): the CPU engines' vectorised GELU (a few ulp from the tanh form; at
// gate -inf, 0 / inf's NaN as the tanh form gives).
inline constexpr float kGeluMinus2Root2OverPi = -1.59576912160573071176f;  // -2 sqrt(2 / pi)
inline constexpr float kGeluCubic = 0.044715f;
float gelu_approx(float v) noexcept;

// The horizontal sum of 8 lanes in the order of one 256-bit register folded in halves:
// ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
float hsum8(const float* lanes) noexcept;

// The reduction of four 8-lane accumulators acc[8j + l] (accumulator j, lane l): s0+=s2,
// s1+=s3, s0+=s1 lane-wise, then t[i] = s0[i] + s0[i+4], then (t0+t1) + (t2+t3).
float reduce_4x8(const float* acc) noexcept;

// The two orders in which the reference engine sums an f16 dot product (the operands are f16
// values; x holds them widened to f32, y as IEEE binary16 bits). Products are fused into the
// running sums (fma) and are exact, so only the order of the additions matters.
enum class DotOrder {
  // Four accumulators of 8 lanes, 32 elements per step (element i feeds acc[i % 32]),
  // reduce_4x8; then the n % 32 leftover products are added in double. Used for one query row.
  k4x8,
  // One accumulator of 8 lanes (element i feeds lane i % 8), hsum8; n must be a multiple of 8.
  // Used when the attention call has several query rows.
  k1x8,
};

// The order of the q.k dots and of the probability.v dots of an attention call with `n_rows`
// query rows and heads of `head_dim` (the reference engine falls back to k4x8 for shapes its
// blocked kernel does not take).
DotOrder qk_dot_order(std::uint32_t n_rows, std::uint32_t head_dim) noexcept;
DotOrder pv_dot_order(std::uint32_t n_rows, std::uint32_t head_dim) noexcept;

// Accumulators a dot in `order` keeps (32 or 8); element i goes to accumulator i % that.
std::size_t dot_lanes(DotOrder order) noexcept;

// sum_i x[i] * f16(y[i]) in `order` (k1x8 needs n % 8 == 0).
float dot_f16(DotOrder order, const float* x, const std::uint16_t* y, std::size_t n) noexcept;

// Reduces dot_lanes(order) accumulators (k4x8: reduce_4x8, k1x8: hsum8) of a dot whose length
// is a multiple of dot_lanes(order).
float reduce_dot(DotOrder order, const float* acc) noexcept;

}  // namespace lpx::kernels::reference
