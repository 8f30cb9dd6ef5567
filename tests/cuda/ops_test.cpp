// The decode-step CUDA kernels (kernels/cuda/ops.cu, attention.cu's KV store, sampling.cu,
// gather.cu) against kernels/reference on seeded random data. Skipped where no GPU is usable.
// Attention itself: attention_test.cpp.
//
// Tolerances, each argued in the comment at the top of the kernel's file:
//   add_bias, add_in_place, kv_store, argmax, x after add_rms_norm's residual add: exact.
//   add_rms_norm output: within 2 ulp (the f32 mean is one ulp off only when the double sum
//     falls within n * 2^-53 of a rounding boundary).
//   swiglu: exact for the whole groups of 8; the n % 8 tail within 2 ulp (glibc's expf is not
//     always correctly rounded).
//   rope: within 2^-21 * (|x0| + |x1|) of the pair's inputs (cos and sin one ulp apart at most).
//   add_residual: x exact given the norm, the norm within 2 ulp; geglu and scale_and_cap: tanh
//     correctly rounded against glibc's tanhf, so within a few ulp of the terms tanh enters.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "cuda/launch.hpp"
#include "gpu_test_support.hpp"
#include "lpx/kinds/quant_backend.h"
#include "reference/half_precision.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using test::cuda_ok;
using test::finished;
using test::normal;

// Distance in ulps between two floats (0 for equal values, including +0 and -0).
std::int64_t ulps(float a, float b) {
  const auto ordered = [](float x) {
    const auto bits = static_cast<std::int64_t>(std::bit_cast<std::int32_t>(x));
    return bits < 0 ? std::int64_t{INT32_MIN} - bits : bits;
  };
  return std::abs(ordered(a) - ordered(b));
}

TEST(CudaOps, AddRmsNormAddsTheResidualExactlyAndNormalisesWithinTwoUlp) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(11);
  for (int n : {5, 576, 4096}) {
    const int rows = 3;
    const std::vector<float> x = normal(rng, std::size_t(rows) * n, 30.0f);
    const std::vector<float> residual = normal(rng, x.size(), 10.0f);
    const std::vector<float> weight = normal(rng, n, 1.0f);
    DeviceBuffer<float> d_x(x), d_residual(residual), d_weight(weight), d_out(x.size());
    add_rms_norm(d_x.get(), d_residual.get(), d_weight.get(), d_out.get(), rows, n, 1e-5f, nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> summed = d_x.download();
    const std::vector<float> out = d_out.download();
    // Then without a residual, in place.
    add_rms_norm(d_x.get(), nullptr, d_weight.get(), d_x.get(), rows, n, 1e-5f, nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> in_place = d_x.download();

    std::vector<float> expected(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(summed[i]),
                std::bit_cast<std::uint32_t>(x[i] + residual[i])) << "n " << n << " i " << i;
    }
    for (int r = 0; r < rows; ++r) {
      reference::rms_norm_row(summed.data() + std::size_t(r) * n, weight.data(),
                              expected.data() + std::size_t(r) * n, n, 1e-5f);
    }
    for (std::size_t i = 0; i < x.size(); ++i) {
      ASSERT_LE(ulps(out[i], expected[i]), 2) << "n " << n << " i " << i;
      ASSERT_LE(ulps(in_place[i], expected[i]), 2) << "in place, n " << n << " i " << i;
    }
  }
}

// x + scale * rms_norm(y) (Gemma's post-norms, Granite's residual scale), and the plain
// scaled add, against the reference norm.
TEST(CudaOps, AddResidualNormalisesAndScalesAsTheReference) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(19);
  for (int n : {5, 640, 2304}) {
    for (const float scale : {1.0f, 0.22f}) {
      for (const bool norm : {true, false}) {
        SCOPED_TRACE(::testing::Message() << "n " << n << " scale " << scale << " norm " << norm);
        const int rows = 3;
        const std::vector<float> x = normal(rng, std::size_t(rows) * n, 3.0f);
        const std::vector<float> y = normal(rng, x.size(), 20.0f);
        const std::vector<float> weight = normal(rng, n, 1.0f);
        DeviceBuffer<float> d_x(x), d_y(y), d_weight(weight);
        add_residual(d_x.get(), d_y.get(), norm ? d_weight.get() : nullptr, scale, rows, n,
                     1e-6f, nullptr);
        ASSERT_TRUE(finished());
        const std::vector<float> got = d_x.download();
        EXPECT_EQ(d_y.download(), y);  // y is not written
        std::vector<float> term = y;
        for (int r = 0; r < rows && norm; ++r) {
          reference::rms_norm_row(y.data() + std::size_t(r) * n, weight.data(),
                                  term.data() + std::size_t(r) * n, n, 1e-6f);
        }
        for (std::size_t i = 0; i < x.size(); ++i) {
          const float expected = x[i] + (scale != 1.0f ? term[i] * scale : term[i]);
          if (norm) {  // the norm's output within 2 ulp, then a product and a sum
            ASSERT_NEAR(got[i], expected,
                        std::ldexp(std::fabs(term[i] * scale), -21) + std::ldexp(std::fabs(expected), -23))
                << i;
          } else {
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected)) << i;
          }
        }
      }
    }
  }
}

// The embedding scale (no cap), and the logit scale with Gemma 2's final soft cap.
TEST(CudaOps, ScaleAndCapScalesThenBendsAsTheReference) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(20);
  const std::vector<float> x = normal(rng, 5000, 40.0f);
  for (const auto& [scale, cap] : {std::pair{25.3f, 0.0f}, std::pair{0.125f, 30.0f},
                                   std::pair{1.0f, 30.0f}, std::pair{1.0f, 0.0f}}) {
    DeviceBuffer<float> d_x(x);
    scale_and_cap(d_x.get(), x.size(), scale, cap, nullptr);
    ASSERT_TRUE(finished());
    const std::vector<float> got = d_x.download();
    for (std::size_t i = 0; i < x.size(); ++i) {
      float expected = scale != 1.0f ? x[i] * scale : x[i];
      if (cap > 0.0f) {
        expected = cap * std::tanh(expected * (1.0f / cap));
        // tanhf may be 2 ulp off the correctly rounded tanh, times the cap; then one rounding.
        ASSERT_LE(std::fabs(double(got[i]) - double(expected)),
                  std::ldexp(double(cap), -22) + std::ldexp(std::fabs(double(expected)), -23))
            << "scale " << scale << " cap " << cap << " i " << i;
      } else {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected)) << i;
      }
    }
  }
}

// GeGLU against reference::geglu: tanh may be one ulp apart, which moves gelu by up to
// 2^-24 * |0.5 gate| (times up); everything else rounds as the reference rounds it.
TEST(CudaOps, GegluMatchesTheReferenceWithinTanhsUlp) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(21);
  const std::size_t n = 8 * 397 + 5;
  std::vector<float> gate = normal(rng, n, 3.0f);
  gate[1] = -30.0f;
  gate[2] = 30.0f;
  gate[3] = 0.0f;
  const std::vector<float> up = normal(rng, n, 1.0f);
  std::vector<float> expected(n);
  reference::geglu(gate.data(), up.data(), expected.data(), n);
  DeviceBuffer<float> d_gate(gate), d_up(up), d_out(n);
  geglu(d_gate.get(), d_up.get(), d_out.get(), n, nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> got = d_out.download();
  for (std::size_t i = 0; i < n; ++i) {
    const double bound = std::ldexp(std::fabs(gate[i] * up[i]), -23) +
                         std::ldexp(std::fabs(expected[i]), -22);
    ASSERT_LE(std::fabs(double(got[i]) - double(expected[i])), bound)
        << i << ": gate " << gate[i] << " got " << got[i] << " reference " << expected[i];
  }
  EXPECT_EQ(got[2], gate[2] * up[2]);  // tanh(large) is 1: gelu(v) = v
  EXPECT_EQ(got[3], 0.0f);
}

TEST(CudaOps, AddBiasAndAddInPlaceAreExact) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(12);
  const int rows = 5;
  const int width = 897;
  const std::vector<float> x = normal(rng, std::size_t(rows) * width, 3.0f);
  const std::vector<float> y = normal(rng, x.size(), 3.0f);
  const std::vector<float> bias = normal(rng, width, 1.0f);
  DeviceBuffer<float> d_x(x), d_y(y), d_bias(bias);
  add_bias(d_x.get(), d_bias.get(), rows, width, nullptr);
  add_in_place(d_x.get(), d_y.get(), x.size(), nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> got = d_x.download();
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float expected = (x[i] + bias[i % width]) + y[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected)) << i;
  }
}

// The head's input: the output rows, in the order asked, copied bit for bit.
TEST(CudaOps, GatherRowsCopiesTheAskedRowsInOrder) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(20);
  const int rows = 9;
  const int width = 577;
  const std::vector<float> x = normal(rng, std::size_t(rows) * width, 3.0f);
  const std::vector<std::int32_t> wanted = {8, 0, 3, 3};
  DeviceBuffer<float> d_x(x), d_out(wanted.size() * width);
  DeviceBuffer<std::int32_t> d_rows(wanted);
  gather_rows(d_x.get(), d_rows.get(), static_cast<int>(wanted.size()), width, d_out.get(), nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> got = d_out.download();
  for (std::size_t i = 0; i < wanted.size(); ++i) {
    for (int j = 0; j < width; ++j) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i * width + j]),
                std::bit_cast<std::uint32_t>(x[static_cast<std::size_t>(wanted[i]) * width + j]))
          << i << "," << j;
    }
  }
}

TEST(CudaOps, SwigluIsExactOnWholeGroupsOfEightAndWithinTwoUlpOnTheTail) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(13);
  const std::size_t n = 8 * 397 + 5;
  std::vector<float> gate = normal(rng, n, 4.0f);
  gate[1] = -90.0f;  // exp overflows: silu is -0
  gate[2] = 90.0f;
  const std::vector<float> up = normal(rng, n, 1.0f);
  std::vector<float> expected(n);
  reference::swiglu(gate.data(), up.data(), expected.data(), n);

  DeviceBuffer<float> d_gate(gate), d_up(up), d_out(n);
  swiglu(d_gate.get(), d_up.get(), d_out.get(), n, nullptr);
  ASSERT_TRUE(finished());
  const std::vector<float> out = d_out.download();
  swiglu(d_gate.get(), d_up.get(), d_gate.get(), n, nullptr);  // out aliasing gate
  ASSERT_TRUE(finished());
  const std::vector<float> in_place = d_gate.download();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t allowed = i < n - n % 8 ? 0 : 2;
    ASSERT_LE(ulps(out[i], expected[i]), allowed) << i << ": " << out[i] << " vs " << expected[i];
    ASSERT_EQ(std::bit_cast<std::uint32_t>(in_place[i]), std::bit_cast<std::uint32_t>(out[i])) << i;
  }
}

TEST(CudaOps, RopeMatchesReferenceInBothModes) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(14);
  const int rows = 4;
  const int heads = 9;
  const int head_dim = 64;
  const std::vector<std::int32_t> positions = {0, 1, 777, 32767};
  std::vector<float> factors(head_dim / 2);
  for (float& f : factors) f = std::uniform_real_distribution<float>(1.0f, 8.0f)(rng);
  DeviceBuffer<std::int32_t> d_positions(positions);
  DeviceBuffer<float> d_factors(factors);

  for (int mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    for (int n_rot : {head_dim, head_dim / 2}) {
      for (bool with_factors : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "mode " << mode << " n_rot " << n_rot
                                          << " factors " << with_factors);
        const std::vector<float> x = normal(rng, std::size_t(rows) * heads * head_dim, 2.0f);
        RopeArgs args;
        args.mode = mode;
        args.n_rot = n_rot;
        args.freq_base = with_factors ? 500000.0f : 10000.0f;
        args.freq_scale = with_factors ? 1.0f : 0.25f;
        args.freq_factors = with_factors ? d_factors.get() : nullptr;
        DeviceBuffer<float> d_x(x);
        rope(d_x.get(), rows, heads, head_dim, d_positions.get(), args, nullptr);
        ASSERT_TRUE(finished());
        const std::vector<float> got = d_x.download();

        lpx_rope_params params{};
        params.struct_size = sizeof params;
        params.mode = mode;
        params.n_rot = static_cast<std::uint32_t>(n_rot);
        params.freq_base = args.freq_base;
        params.freq_scale = args.freq_scale;
        params.freq_factors = with_factors ? factors.data() : nullptr;
        std::vector<float> expected = x;
        for (int r = 0; r < rows; ++r) {
          reference::rope_row(expected.data() + std::size_t(r) * heads * head_dim, heads,
                              head_dim, positions[r], params);
        }
        const int pairs = n_rot / 2;
        for (std::size_t h = 0; h < std::size_t(rows) * heads; ++h) {
          const std::size_t base = h * head_dim;
          for (int i = 0; i < pairs; ++i) {
            const std::size_t a = base + (mode == LPX_ROPE_NEOX ? i : 2 * i);
            const std::size_t b = base + (mode == LPX_ROPE_NEOX ? i + pairs : 2 * i + 1);
            const float tolerance = std::ldexp(std::fabs(x[a]) + std::fabs(x[b]), -21);
            ASSERT_NEAR(got[a], expected[a], tolerance) << "head " << h << " pair " << i;
            ASSERT_NEAR(got[b], expected[b], tolerance) << "head " << h << " pair " << i;
          }
          for (int d = n_rot; d < head_dim; ++d) {  // past n_rot: untouched
            ASSERT_EQ(std::bit_cast<std::uint32_t>(got[base + d]),
                      std::bit_cast<std::uint32_t>(x[base + d]));
          }
        }
      }
    }
  }
}

TEST(CudaOps, KvStoreRoundsLikeTheReferenceAndSkipsNegativeSlots) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(15);
  const int rows = 5;
  const int width = 3 * 64;
  const int slots_total = 4 * 16;
  const std::vector<std::int32_t> slots = {37, 2, 63, -1, 16};
  std::vector<float> k = normal(rng, std::size_t(rows) * width, 2.0f);
  std::vector<float> v = normal(rng, k.size(), 2.0f);
  // Row 0 of k: zeros, infinities, NaNs with payloads, overflow, subnormals and exact ties.
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN,
                            std::bit_cast<float>(0x7FA12345u), std::bit_cast<float>(0xFFC00001u),
                            65504.0f, 65519.0f, 65520.0f, -1e6f, 1e-8f, 5.96e-8f,
                            std::ldexp(1.5f, -24), std::ldexp(2.5f, -24),
                            1.0f + std::ldexp(1.0f, -11),
                            1.0f + std::ldexp(3.0f, -11), std::ldexp(1.0f, -14), 6.1e-5f};
  std::copy(std::begin(specials), std::end(specials), k.begin());
  std::copy(std::begin(specials), std::end(specials), v.begin() + width);  // row 1 of v

  constexpr std::uint16_t kUntouched = 0xABCD;
  const std::vector<std::uint16_t> pool(std::size_t(slots_total) * width, kUntouched);
  DeviceBuffer<float> d_k(k), d_v(v);
  DeviceBuffer<std::uint16_t> d_k_pool(pool), d_v_pool(pool);
  DeviceBuffer<std::int32_t> d_slots(slots);
  kv_store(d_k.get(), d_v.get(), d_k_pool.get(), d_v_pool.get(), d_slots.get(), rows, width,
           nullptr);
  ASSERT_TRUE(finished());
  const std::vector<std::uint16_t> k_pool = d_k_pool.download();
  const std::vector<std::uint16_t> v_pool = d_v_pool.download();

  std::vector<std::uint16_t> k_expected = pool;
  std::vector<std::uint16_t> v_expected = pool;
  for (int r = 0; r < rows; ++r) {
    if (slots[r] < 0) continue;
    for (int i = 0; i < width; ++i) {
      const std::size_t at = std::size_t(slots[r]) * width + i;
      k_expected[at] = reference::f32_to_f16(k[std::size_t(r) * width + i]);
      v_expected[at] = reference::f32_to_f16(v[std::size_t(r) * width + i]);
    }
  }
  for (std::size_t i = 0; i < pool.size(); ++i) {
    ASSERT_EQ(k_pool[i], k_expected[i]) << "k element " << i;
    ASSERT_EQ(v_pool[i], v_expected[i]) << "v element " << i;
  }
}

// The fused attention prologue: bit for bit what rope(q), rope(k) and kv_store(k, v) give,
// in both modes, with GQA head counts, a partial rotation and a negative (skipped) slot.
// rope_and_store's arguments over device buffers.
RopeStoreArgs store_args(DeviceBuffer<float>& q, DeviceBuffer<float>& k, DeviceBuffer<float>& v,
                         DeviceBuffer<std::uint16_t>& k_pool, DeviceBuffer<std::uint16_t>& v_pool,
                         int rows, int q_heads, int kv_heads, int head_dim,
                         const DeviceBuffer<std::int32_t>& positions,
                         const DeviceBuffer<std::int32_t>& slots) {
  RopeStoreArgs a;
  a.q = q.get();
  a.k = k.get();
  a.v = v.get();
  a.rows = rows;
  a.q_heads = q_heads;
  a.kv_heads = kv_heads;
  a.head_dim = head_dim;
  a.positions = positions.get();
  a.k_pool = k_pool.get();
  a.v_pool = v_pool.get();
  a.slots = slots.get();
  return a;
}

TEST(CudaOps, RopeAndStoreEqualsRopeTwiceThenKvStore) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(16);
  const int rows = 3, q_heads = 9, kv_heads = 3, head_dim = 64, width = kv_heads * head_dim;
  const std::vector<std::int32_t> positions = {5, 0, 4000};
  const std::vector<std::int32_t> slots = {17, -1, 40};
  const std::vector<std::uint16_t> pool(std::size_t{48} * width, 0xABCD);
  DeviceBuffer<std::int32_t> d_positions(positions), d_slots(slots);
  for (int mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    for (int n_rot : {head_dim, head_dim / 2}) {
      SCOPED_TRACE(::testing::Message() << "mode " << mode << " n_rot " << n_rot);
      const std::vector<float> q = normal(rng, std::size_t(rows) * q_heads * head_dim, 2.0f);
      const std::vector<float> k = normal(rng, std::size_t(rows) * width, 2.0f);
      const std::vector<float> v = normal(rng, std::size_t(rows) * width, 2.0f);
      RopeArgs args;
      args.mode = mode;
      args.n_rot = n_rot;
      args.freq_base = 10000.0f;
      // Separate launches.
      DeviceBuffer<float> q1(q), k1(k), v1(v);
      DeviceBuffer<std::uint16_t> kp1(pool), vp1(pool);
      rope(q1.get(), rows, q_heads, head_dim, d_positions.get(), args, nullptr);
      rope(k1.get(), rows, kv_heads, head_dim, d_positions.get(), args, nullptr);
      kv_store(k1.get(), v1.get(), kp1.get(), vp1.get(), d_slots.get(), rows, width, nullptr);
      // One launch.
      DeviceBuffer<float> q2(q), k2(k), v2(v);
      DeviceBuffer<std::uint16_t> kp2(pool), vp2(pool);
      const RopeStoreArgs a = store_args(q2, k2, v2, kp2, vp2, rows, q_heads, kv_heads, head_dim,
                                         d_positions, d_slots);
      rope_and_store(a, args, nullptr);
      ASSERT_TRUE(finished());
      EXPECT_EQ(q2.download(), q1.download());
      EXPECT_EQ(k2.download(), k1.download());
      EXPECT_EQ(kp2.download(), kp1.download());
      EXPECT_EQ(vp2.download(), vp1.download());
    }
  }
}

// Qwen3's and Gemma 3's q/k norms inside rope_and_store: the same as rms_norm over rows of
// head_dim (within its 2 ulp: the double sums add in another order), then rope, then kv_store;
// and a NoPE layer (n_rot 0) stores k and v unrotated.
TEST(CudaOps, RopeAndStoreNormalisesHeadsFirstAndSkipsRopeForNope) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(22);
  const std::vector<std::int32_t> positions = {5, 0, 700};
  const std::vector<std::int32_t> slots = {17, -1, 40};
  DeviceBuffer<std::int32_t> d_positions(positions), d_slots(slots);
  const struct {
    int head_dim, n_rot, q_heads, kv_heads;
    float attn_factor;
  } cases[] = {{256, 256, 4, 1, 1.0f},   // Gemma 3
               {256, 0, 4, 1, 1.0f},     // a NoPE layer
               {80, 80, 6, 2, 1.19f},    // heads of 80 (not a multiple of 32), an attn factor
               {128, 64, 16, 8, 1.0f}};  // partial rope, Qwen3's heads
  for (const auto& c : cases) {
    SCOPED_TRACE(::testing::Message() << "head_dim " << c.head_dim << " n_rot " << c.n_rot);
    const int rows = 3, head_dim = c.head_dim, width = c.kv_heads * head_dim;
    const std::vector<std::uint16_t> pool(std::size_t{48} * width, 0xABCD);
    const std::vector<float> q_norm = normal(rng, head_dim, 1.0f);
    const std::vector<float> k_norm = normal(rng, head_dim, 1.0f);
    DeviceBuffer<float> d_q_norm(q_norm), d_k_norm(k_norm);
    const std::vector<float> q = normal(rng, std::size_t(rows) * c.q_heads * head_dim, 2.0f);
    const std::vector<float> k = normal(rng, std::size_t(rows) * width, 2.0f);
    const std::vector<float> v = normal(rng, std::size_t(rows) * width, 2.0f);
    RopeArgs args;
    args.mode = LPX_ROPE_NEOX;
    args.n_rot = c.n_rot;
    args.freq_base = 1000000.0f;
    args.attn_factor = c.attn_factor;
    // Separate launches: the norms over rows of head_dim, rope, the store.
    DeviceBuffer<float> q1(q), k1(k), v1(v);
    DeviceBuffer<std::uint16_t> kp1(pool), vp1(pool);
    rms_norm(q1.get(), d_q_norm.get(), q1.get(), rows * c.q_heads, head_dim, 1e-6f, nullptr);
    rms_norm(k1.get(), d_k_norm.get(), k1.get(), rows * c.kv_heads, head_dim, 1e-6f, nullptr);
    rope(q1.get(), rows, c.q_heads, head_dim, d_positions.get(), args, nullptr);
    rope(k1.get(), rows, c.kv_heads, head_dim, d_positions.get(), args, nullptr);
    kv_store(k1.get(), v1.get(), kp1.get(), vp1.get(), d_slots.get(), rows, width, nullptr);
    // One launch.
    DeviceBuffer<float> q2(q), k2(k), v2(v);
    DeviceBuffer<std::uint16_t> kp2(pool), vp2(pool);
    RopeStoreArgs a = store_args(q2, k2, v2, kp2, vp2, rows, c.q_heads, c.kv_heads, head_dim,
                                 d_positions, d_slots);
    a.q_norm = d_q_norm.get();
    a.k_norm = d_k_norm.get();
    a.norm_eps = 1e-6f;
    rope_and_store(a, args, nullptr);
    ASSERT_TRUE(finished());
    for (const auto& [fused, separate] : {std::pair{&q2, &q1}, std::pair{&k2, &k1}}) {
      const std::vector<float> got = fused->download(), expected = separate->download();
      for (std::size_t i = 0; i < got.size(); ++i) {
        // 2 ulp of the normalised values (|v| < 8 here), carried through a pair's rotation.
        ASSERT_NEAR(got[i], expected[i], 4e-6 + 1e-6 * double(std::fabs(expected[i]))) << i;
      }
    }
    const std::vector<std::uint16_t> stored = kp2.download(), expected = kp1.download();
    for (std::size_t i = 0; i < stored.size(); ++i) {  // f16 of nearly equal values
      ASSERT_NEAR(reference::f16_to_f32(stored[i]), reference::f16_to_f32(expected[i]),
                  std::ldexp(double(std::fabs(reference::f16_to_f32(expected[i]))), -10) + 1e-6) << i;
    }
    EXPECT_EQ(vp2.download(), vp1.download());
    if (c.n_rot == 0) {  // nothing rotated: the normalised k is what was stored
      const std::vector<float> k_out = k2.download();
      EXPECT_EQ(reference::f32_to_f16(k_out[0]), stored[std::size_t{17} * width]);
    }
  }
}

// The lowest index of the largest value; NaN ranks below everything.
std::int32_t host_argmax(const float* row, int n) {
  int best = 0;
  for (int i = 1; i < n; ++i) {
    const bool best_nan = std::isnan(row[best]);
    if (!std::isnan(row[i]) && (best_nan || row[i] > row[best])) best = i;
  }
  return best;
}

TEST(CudaOps, ArgmaxRowsTakesTheLowestIndexOfTheMaximumAndRanksNanLowest) {
  LPX_REQUIRE_GPU();
  std::mt19937 rng(16);
  for (int n : {1, 37, 256, 151936}) {
    SCOPED_TRACE(::testing::Message() << "n " << n);
    const int rows = 7;
    std::vector<float> logits = normal(rng, std::size_t(rows) * n, 5.0f);
    const auto at = [&](int r, int i) -> float& { return logits[std::size_t(r) * n + i]; };
    const int last = n - 1;
    // Row 0: random. Row 1: the maximum twice. Row 2: NaNs around a maximum.
    // Row 3: all NaN. Row 4: all -inf. Row 5: all equal (+0 and -0). Row 6: max at the end.
    at(1, last) = 100.0f;
    at(1, n / 3) = 100.0f;
    for (int i = 0; i < n; i += 3) at(2, i) = kNaN;
    at(2, n / 2) = 50.0f;
    for (int i = 0; i < n; ++i) at(3, i) = i % 2 ? kNaN : -kNaN;
    for (int i = 0; i < n; ++i) at(4, i) = -kInf;
    for (int i = 0; i < n; ++i) at(5, i) = i % 2 ? 0.0f : -0.0f;
    at(6, last) = 1e30f;
    DeviceBuffer<float> d_logits(logits);
    DeviceBuffer<std::int32_t> d_out(rows);
    argmax_rows(d_logits.get(), rows, n, d_out.get(), nullptr);
    ASSERT_TRUE(finished());
    const std::vector<std::int32_t> out = d_out.download();
    for (int r = 0; r < rows; ++r) EXPECT_EQ(out[r], host_argmax(&at(r, 0), n)) << "row " << r;
  }
}

}  // namespace
}  // namespace lpx::kernels::cuda
