// Properties of the scalar decode-step kernels (reference/ops.hpp) that hold whatever their exact
// rounding: the exp approximation's accuracy, softmax weights summing to one, attention to one
// position returning its v, RoPE at position 0 being the identity. Bit-exactness against the
// reference engine itself was checked when these kernels were written (see ops_arithmetic.hpp).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numbers>
#include <vector>

#include "ops_test_support.hpp"
#include "reference/half_precision.hpp"
#include "reference/ops.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels::reference {
namespace {

using ops_test::PagedCache;
using ops_test::Random;

// Distance in units in the last place between two finite floats of the same sign.
std::int64_t ulps_apart(float a, float b) {
  return std::abs(static_cast<std::int64_t>(std::bit_cast<std::int32_t>(a)) -
                  static_cast<std::int64_t>(std::bit_cast<std::int32_t>(b)));
}

TEST(OpsReference, ExpApproximationIsWithinTwoUlpOfExp) {
  std::int64_t worst = 0;
  float worst_x = 0.0f;
  for (float x = -87.0f; x <= 88.0f; x += 0.00137f) {
    const std::int64_t ulps = ulps_apart(exp_approx(x), std::exp(x));
    if (ulps > worst) {
      worst = ulps;
      worst_x = x;
    }
  }
  EXPECT_LE(worst, 2) << "at x = " << worst_x;
}

TEST(OpsReference, ExpApproximationEdgesAreExact) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_approx(0.0f), 1.0f);
  EXPECT_EQ(exp_approx(-kInf), 0.0f);
  EXPECT_FALSE(std::signbit(exp_approx(-kInf)));
  EXPECT_EQ(exp_approx(-200.0f), 0.0f);
  EXPECT_EQ(exp_approx(kInf), kInf);
  EXPECT_EQ(exp_approx(100.0f), kInf);
  // Results between the smallest normal and zero go through the two-factor scaling.
  EXPECT_GT(exp_approx(-95.0f), 0.0f);
  EXPECT_NEAR(exp_approx(-95.0f) / std::exp(-95.0f), 1.0f, 1e-3f);
  EXPECT_TRUE(std::isnan(exp_approx(std::numeric_limits<float>::quiet_NaN())));
}

TEST(OpsReference, SwigluUsesTheApproximationForWholeGroupsAndExpfForTheTail) {
  Random random(1);
  const std::vector<float> gate = random.normal(21, 4.0f);
  const std::vector<float> up = random.normal(21, 1.0f);
  std::vector<float> out(21);
  swiglu(gate.data(), up.data(), out.data(), out.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    const float silu = i < 16 ? silu_approx(gate[i]) : silu_libm(gate[i]);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(silu * up[i]))
        << i;
    EXPECT_NEAR(out[i], gate[i] / (1.0f + std::exp(-gate[i])) * up[i],
                1e-5f * (1.0f + std::fabs(out[i])));
  }
  // In place over the gate gives the same values.
  std::vector<float> in_place = gate;
  swiglu(in_place.data(), up.data(), in_place.data(), in_place.size());
  EXPECT_TRUE(ops_test::same_bits(out, in_place));
}

TEST(OpsReference, RmsNormNormalisesToUnitRms) {
  Random random(2);
  for (std::size_t n : {1u, 7u, 576u}) {
    const std::vector<float> x = random.normal(n, 30.0f);
    const std::vector<float> ones(n, 1.0f);
    std::vector<float> out(n);
    rms_norm_row(x.data(), ones.data(), out.data(), n, 1e-6f);
    double squares = 0.0;
    for (float v : out) squares += static_cast<double>(v) * static_cast<double>(v);
    EXPECT_NEAR(squares / static_cast<double>(n), 1.0, 1e-4) << n;
  }
}

lpx_rope_params rope_params(std::int32_t mode, std::uint32_t n_rot, const float* factors) {
  lpx_rope_params params{};
  params.struct_size = sizeof params;
  params.mode = mode;
  params.n_rot = n_rot;
  params.freq_base = 10000.0f;
  params.freq_scale = 1.0f;
  params.freq_factors = factors;
  return params;
}

TEST(OpsReference, RopeAtPositionZeroIsTheIdentity) {
  Random random(3);
  const std::vector<float> factors = random.normal(32, 1.0f);
  for (std::int32_t mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    const std::vector<float> x = random.normal(3 * 64, 2.0f);
    std::vector<float> rotated = x;
    const lpx_rope_params params = rope_params(mode, 64, factors.data());
    rope_row(rotated.data(), 3, 64, 0, params);
    EXPECT_TRUE(ops_test::same_bits(x, rotated)) << mode;
  }
}

TEST(OpsReference, RopeRotatesPairsAndLeavesTheOtherDimsAlone) {
  Random random(4);
  for (std::int32_t mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    const std::vector<float> x = random.normal(2 * 80, 2.0f);
    std::vector<float> rotated = x;
    rope_row(rotated.data(), 2, 80, 4321, rope_params(mode, 48, nullptr));
    for (std::size_t h = 0; h < 2; ++h) {
      for (std::size_t i = 0; i < 24; ++i) {
        const std::size_t a = h * 80 + (mode == LPX_ROPE_NEOX ? i : 2 * i);
        const std::size_t b = h * 80 + (mode == LPX_ROPE_NEOX ? i + 24 : 2 * i + 1);
        EXPECT_NEAR(std::hypot(rotated[a], rotated[b]), std::hypot(x[a], x[b]), 1e-5f);
      }
      for (std::size_t d = 48; d < 80; ++d) EXPECT_EQ(rotated[h * 80 + d], x[h * 80 + d]);
    }
    // Pair 0 turns by exactly the position (in radians).
    const std::size_t second = mode == LPX_ROPE_NEOX ? 24 : 1;
    const double turned = std::atan2(static_cast<double>(rotated[second]), rotated[0]) -
                          std::atan2(static_cast<double>(x[second]), x[0]);
    EXPECT_NEAR(std::remainder(turned - 4321.0, 2.0 * std::numbers::pi), 0.0, 1e-4);
  }
}

TEST(OpsReference, DotOrdersFollowTheRowCountAndShape) {
  EXPECT_EQ(qk_dot_order(1, 64), DotOrder::k4x8);
  EXPECT_EQ(qk_dot_order(2, 64), DotOrder::k1x8);
  EXPECT_EQ(qk_dot_order(3, 36), DotOrder::k4x8);
  EXPECT_EQ(pv_dot_order(1, 128), DotOrder::k4x8);
  EXPECT_EQ(pv_dot_order(3, 36), DotOrder::k1x8);
  EXPECT_EQ(pv_dot_order(3, 38), DotOrder::k4x8);
  // The two orders round differently but both compute the dot.
  Random random(5);
  const std::vector<float> x = random.normal(72, 1.0f);
  std::vector<std::uint16_t> y(72);
  double exact = 0.0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    y[i] = f32_to_f16(random.normal(1, 1.0f)[0]);
    exact += static_cast<double>(x[i]) * static_cast<double>(f16_to_f32(y[i]));
  }
  EXPECT_NEAR(dot_f16(DotOrder::k4x8, x.data(), y.data(), 72), exact, 1e-4);
  EXPECT_NEAR(dot_f16(DotOrder::k1x8, x.data(), y.data(), 72), exact, 1e-4);
}

TEST(OpsReference, AttentionToOnePositionReturnsItsValue) {
  Random random(6);
  PagedCache cache(random, 1, 2, 64, 16);
  const std::vector<float> q = random.normal(4 * 64, 1.0f);
  std::vector<float> out(q.size());
  const std::vector<std::int32_t> positions{0};
  const lpx_attention_args args = ops_test::attention_args(cache, q, out, positions, 4);
  std::vector<float> scratch(attention_scratch_floats(1));
  attention_row(args, 0, 0, 4, scratch.data());
  for (std::uint32_t h = 0; h < 4; ++h) {
    for (std::uint32_t d = 0; d < 64; ++d) {
      EXPECT_EQ(out[h * 64 + d], f16_to_f32(cache.v_at(0, h / 2, d))) << h << " " << d;
    }
  }
}

TEST(OpsReference, AttentionWeightsSumToOne) {
  // With every v equal to 1 the output is the sum of the f16-rounded softmax weights.
  Random random(7);
  for (std::int32_t position : {0, 6, 7, 100, 299}) {
    PagedCache cache(random, static_cast<std::uint32_t>(position) + 1, 1, 64, 7);
    for (std::uint16_t& v : cache.v) {
      if (v != PagedCache::kNaN) v = f32_to_f16(1.0f);
    }
    const std::vector<float> q = random.normal(64, 3.0f);
    std::vector<float> out(64);
    const std::vector<std::int32_t> positions{position};
    const lpx_attention_args args = ops_test::attention_args(cache, q, out, positions, 1);
    std::vector<float> scratch(attention_scratch_floats(static_cast<std::uint32_t>(position) + 1));
    attention_row(args, 0, 0, 1, scratch.data());
    for (float v : out)
      EXPECT_NEAR(v, 1.0f, 1e-3f * (1.0f + static_cast<float>(position) / 64)) << position;
  }
}

// The float softmax over the positions a row attends to: all of them, or with a window the last
// `window`; scores bent by the soft cap when there is one.
TEST(OpsReference, AttentionMatchesAFloatSoftmaxClosely) {
  constexpr std::uint32_t kDim = 64;
  constexpr std::int32_t kPosition = 40;
  struct Case {
    std::uint32_t window;
    float softcap;
  };
  for (const Case c : {Case{0, 0.0f}, Case{7, 0.0f}, Case{16, 0.0f}, Case{0, 2.0f}, Case{9, 1.5f}}) {
    Random random(8);
    PagedCache cache(random, kPosition + 1, 1, kDim, 16);
    const std::vector<float> q = random.normal(kDim, 4.0f);
    std::vector<float> out(kDim);
    const std::vector<std::int32_t> positions{kPosition};
    lpx_attention_args args = ops_test::attention_args(cache, q, out, positions, 1);
    args.window = c.window;
    args.softcap = c.softcap;
    std::vector<float> scratch(attention_scratch_floats(kPosition + 1));
    attention_row(args, 0, 0, 1, scratch.data());

    const std::int32_t first = c.window == 0 ? 0 : kPosition + 1 - static_cast<std::int32_t>(c.window);
    std::vector<double> weights(kPosition + 1, 0.0);
    double max = -1e300;
    for (std::int32_t t = first; t <= kPosition; ++t) {
      double dot = 0.0;
      for (std::uint32_t d = 0; d < kDim; ++d) {
        dot += static_cast<double>(q[d]) *
               static_cast<double>(f16_to_f32(cache.k_at(static_cast<std::uint32_t>(t), 0, d)));
      }
      double score = dot * static_cast<double>(args.scale);
      if (c.softcap > 0) score = double{c.softcap} * std::tanh(score / double{c.softcap});
      weights[static_cast<std::size_t>(t)] = score;
      max = std::max(max, score);
    }
    double sum = 0.0;
    for (std::int32_t t = first; t <= kPosition; ++t) {
      double& w = weights[static_cast<std::size_t>(t)];
      sum += (w = std::exp(w - max));
    }
    for (std::uint32_t d = 0; d < kDim; ++d) {
      double expected = 0.0;
      for (std::int32_t t = first; t <= kPosition; ++t) {
        expected += weights[static_cast<std::size_t>(t)] / sum *
                    static_cast<double>(f16_to_f32(cache.v_at(static_cast<std::uint32_t>(t), 0, d)));
      }
      EXPECT_NEAR(out[d], expected, 5e-3) << d << " window " << c.window << " softcap " << c.softcap;
    }
  }
}

// A window reaching back to position 0 (or beyond) is no window: not one bit changes.
TEST(OpsReference, AWindowCoveringTheWholeContextChangesNothing) {
  Random random(9);
  PagedCache cache(random, 50, 2, 64, 16);
  const std::vector<float> q = random.normal(2 * 4 * 64, 2.0f);
  const std::vector<std::int32_t> positions{48, 49};
  std::vector<float> plain(q.size()), windowed(q.size());
  lpx_attention_args args = ops_test::attention_args(cache, q, plain, positions, 4);
  std::vector<float> scratch(attention_scratch_floats(50));
  for (std::uint32_t row = 0; row < 2; ++row) attention_row(args, row, 0, 4, scratch.data());
  args.out = windowed.data();
  args.window = 50;
  for (std::uint32_t row = 0; row < 2; ++row) attention_row(args, row, 0, 4, scratch.data());
  EXPECT_EQ(std::memcmp(plain.data(), windowed.data(), plain.size() * sizeof(float)), 0);
}

TEST(OpsReference, GegluIsGeluTanhTimesUp) {
  const std::vector<float> gate = {-6.0f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 3.0f, 9.0f};
  const std::vector<float> up = {1.0f, 2.0f, -1.0f, 5.0f, 1.0f, -3.0f, 0.5f, 1.0f};
  std::vector<float> out(gate.size());
  geglu(gate.data(), up.data(), out.data(), gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double v = gate[i];
    const double gelu = 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) *
                                                   (v + 0.044715 * v * v * v)));
    EXPECT_NEAR(out[i], gelu * double{up[i]}, 1e-6 * (1.0 + std::abs(gelu * double{up[i]}))) << v;
  }
  EXPECT_EQ(out[3], 0.0f);                 // gelu(0) = 0
  EXPECT_NEAR(out[7], 9.0f, 1e-6f);        // gelu(v) -> v for large v
  EXPECT_NEAR(out[0], 0.0f, 1e-6f);        // and -> 0 for very negative v
}

// The CPU engines' GeGLU: the tanh form's values within a few f32 ulp (more where the result
// is a tiny difference), 0 and the gate itself at the ends, over the range gates take.
TEST(OpsReference, GegluApproxIsGeluTanhWithinAFewUlp) {
  std::vector<float> gate;
  for (float v = -12.0f; v <= 12.0f; v += 0.00731f) gate.push_back(v);
  for (float v : {-1e4f, -200.0f, -60.0f, 60.0f, 200.0f, 1e4f}) gate.push_back(v);
  const std::vector<float> up(gate.size(), 1.0f);
  std::vector<float> out(gate.size());
  geglu_approx(gate.data(), up.data(), out.data(), gate.size());
  for (std::size_t i = 0; i < gate.size(); ++i) {
    const double v = gate[i];
    // 0.5 v (1 + tanh(u)) = v / (1 + exp(-2u)), the latter without double's cancellation.
    const double two_u = 2.0 * std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v);
    const double gelu = v / (1.0 + std::exp(-two_u));
    // A few ulp, plus what rounding the exponent 2u to f32 moves exp(2u) by: |2u| ulp (the
    // tanh form's 1 + tanh(u) is as sensitive where gelu tends to 0).
    const double ulp = std::ldexp(1.0, -23) * std::abs(gelu);
    EXPECT_NEAR(out[i], gelu, (4 + 2 * std::abs(two_u)) * ulp + 1e-30) << v;
  }
  const float zero = 0.0f;
  float zero_out = 1.0f;
  geglu_approx(&zero, up.data(), &zero_out, 1);
  EXPECT_EQ(zero_out, 0.0f);
}

TEST(OpsReference, GegluF16RoundsLikeLlamaCpp) {
  // Gate and gelu rounded to f16, clamped outside (-10, 10); gelu within 1 f16 ulp of exact.
  const std::vector<float> gate = {-12.0f, -10.0f, -1.0f, 0.0f, 0.3f, 2.5f, 10.0f, 11.0f};
  const std::vector<float> up = {3.0f, 1.0f, 2.0f, 5.0f, -1.0f, 1.0f, 0.5f, 2.0f};
  std::vector<float> out(gate.size());
  geglu_f16(gate.data(), up.data(), out.data(), gate.size());
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_EQ(out[6], 5.0f);   // the gate itself times up
  EXPECT_EQ(out[7], 22.0f);
  for (std::size_t i : {2u, 4u, 5u}) {
    const float exact = gelu_tanh(gate[i]);
    EXPECT_EQ(out[i], f16_to_f32(f32_to_f16(out[i] / up[i])) * up[i]) << "an f16 value times up";
    EXPECT_NEAR(out[i] / up[i], exact, std::abs(exact) / 1024.0f) << gate[i];
  }
  // llama.cpp's table is built with the inner 1 + 0.044715 x^2 fused (GCC's contraction under
  // -mfma); gelu(-1.9990234375) lies on an f16 rounding midpoint, and that build rounds it to
  // 0xA9D3. An unfused evaluation gives 0xA9D2 and moves Gemma 3's logits by ~0.1.
  const float midpoint = f16_to_f32(0xBFFF);
  const float one = 1.0f;
  float result = 0.0f;
  geglu_f16(&midpoint, &one, &result, 1);
  EXPECT_EQ(f32_to_f16(result), 0xA9D3u);
}

}  // namespace
}  // namespace lpx::kernels::reference
