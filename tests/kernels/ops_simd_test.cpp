// The SIMD decode-step kernels (each kernel set: cpu/kernel_set.hpp) against the scalar
// reference, bit for bit, on random inputs of
// awkward sizes (odd lengths, partial vectors, heads not a multiple of 32, blocks that split
// the 8- and 32-position groups). Skipped for a set this CPU cannot run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_set_params.hpp"
#include "ops_test_support.hpp"
#include "reference/ops.hpp"
#include "reference/ops_arithmetic.hpp"

namespace lpx::kernels {
namespace {

using ops_test::PagedCache;
using ops_test::Random;
using ops_test::same_bits;

class OpsSimd : public ::testing::TestWithParam<const cpu::KernelSet*> {
 protected:
  void SetUp() override {
    if (!GetParam()->runs_here()) GTEST_SKIP() << test::skip_message(*GetParam());
  }
  const cpu::KernelSet& k() const { return *GetParam(); }
};

TEST_P(OpsSimd, ExpApproximationMatchesLaneByLane) {
  // swiglu with up = 1 exposes silu_approx, whose only rounding-sensitive part is the exp; the
  // gates sweep every path of the approximation (normal, two-factor scaling, saturation).
  Random random(10);
  std::vector<float> gate;
  for (float x = -200.0f; x <= 200.0f; x += 0.0371f) gate.push_back(x);
  for (float x : {0.0f, -0.0f, 87.5f, -87.5f, 88.7f, -88.7f, 103.0f, -103.0f, 130.0f, -130.0f}) {
    gate.push_back(x);
  }
  const std::vector<float> noise = random.normal(4096, 30.0f);
  gate.insert(gate.end(), noise.begin(), noise.end());
  gate.resize(gate.size() - gate.size() % 8);
  const std::vector<float> ones(gate.size(), 1.0f);
  std::vector<float> expected(gate.size());
  std::vector<float> actual(gate.size());
  reference::swiglu(gate.data(), ones.data(), expected.data(), gate.size());
  k().swiglu(gate.data(), ones.data(), actual.data(), gate.size());
  EXPECT_TRUE(same_bits(expected, actual));
}

TEST_P(OpsSimd, SwigluMatchesReference) {
  Random random(11);
  for (std::size_t n : {1u, 7u, 8u, 9u, 1003u, 1536u}) {
    std::vector<float> gate = random.normal(n, 5.0f);
    for (std::size_t i = 0; i < n; i += 97) gate[i] *= 30.0f;  // some saturating gates
    const std::vector<float> up = random.normal(n, 1.0f);
    std::vector<float> expected(n);
    std::vector<float> actual(n);
    reference::swiglu(gate.data(), up.data(), expected.data(), n);
    k().swiglu(gate.data(), up.data(), actual.data(), n);
    EXPECT_TRUE(same_bits(expected, actual)) << "n = " << n;
    std::vector<float> in_place = up;  // out aliasing up
    k().swiglu(gate.data(), in_place.data(), in_place.data(), n);
    EXPECT_TRUE(same_bits(expected, in_place)) << "in place, n = " << n;
  }
}

TEST_P(OpsSimd, GegluMatchesReference) {
  Random random(13);
  for (std::size_t n : {1u, 7u, 8u, 9u, 1003u, 2048u}) {
    std::vector<float> gate = random.normal(n, 3.0f);
    for (std::size_t i = 0; i < n; i += 89) gate[i] *= 40.0f;  // saturating gates, both ways
    if (n > 8) gate[3] = 0.0f, gate[5] = -0.0f;
    const std::vector<float> up = random.normal(n, 1.0f);
    std::vector<float> expected(n);
    std::vector<float> actual(n);
    reference::geglu_approx(gate.data(), up.data(), expected.data(), n);
    k().geglu(gate.data(), up.data(), actual.data(), n);
    EXPECT_TRUE(same_bits(expected, actual)) << "n = " << n;
    std::vector<float> in_place = gate;  // out aliasing gate
    k().geglu(in_place.data(), up.data(), in_place.data(), n);
    EXPECT_TRUE(same_bits(expected, in_place)) << "in place, n = " << n;
  }
}

TEST_P(OpsSimd, RmsNormMatchesReference) {
  Random random(12);
  for (std::size_t n : {1u, 7u, 8u, 576u, 577u, 2051u}) {
    std::vector<float> x = random.normal(n, 2.0f);
    for (std::size_t i = 0; i < n; i += 13) x[i] *= 1000.0f;  // a wide dynamic range
    const std::vector<float> weight = random.normal(n, 1.0f);
    std::vector<float> expected(n);
    std::vector<float> actual(n);
    reference::rms_norm_row(x.data(), weight.data(), expected.data(), n, 1e-5f);
    k().rms_norm_row(x.data(), weight.data(), actual.data(), n, 1e-5f);
    EXPECT_TRUE(same_bits(expected, actual)) << "n = " << n;
    k().rms_norm_row(x.data(), weight.data(), x.data(), n, 1e-5f);  // in place
    EXPECT_TRUE(same_bits(expected, x)) << "in place, n = " << n;
  }
}

TEST_P(OpsSimd, RopeMatchesReference) {
  Random random(13);
  struct Shape {
    std::size_t head_dim;
    std::uint32_t n_rot;
  };
  // Full, partial, pair counts that leave vector tails, and more pairs than one cos/sin pass.
  // n_rot 0: a layer without rope, nothing moves.
  const Shape shapes[] = {{64, 64}, {128, 128}, {128, 64}, {80, 40}, {64, 18}, {160, 138}, {64, 0}};
  for (const Shape& shape : shapes) {
    for (std::int32_t mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
      for (bool factors : {false, true}) {
        const std::vector<float> freq_factors = random.normal(shape.n_rot / 2, 4.0f);
        lpx_rope_params params{};
        params.struct_size = sizeof params;
        params.mode = mode;
        params.n_rot = shape.n_rot;
        params.freq_base = factors ? 500000.0f : 10000.0f;
        params.freq_scale = factors ? 1.0f : 0.25f;
        params.freq_factors = factors ? freq_factors.data() : nullptr;
        params.attn_factor = factors ? 1.25f : 0.0f;  // 0 reads as 1
        for (std::int32_t position :
             {0, 1, 17, 4095, 8000, static_cast<std::int32_t>(random.below(8000))}) {
          const std::vector<float> x = random.normal(3 * shape.head_dim, 3.0f);
          std::vector<float> expected = x;
          std::vector<float> actual = x;
          reference::rope_row(expected.data(), 3, shape.head_dim, position, params);
          k().rope_row(actual.data(), 3, shape.head_dim, position, params);
          EXPECT_TRUE(same_bits(expected, actual))
              << "head_dim " << shape.head_dim << " n_rot " << shape.n_rot << " mode " << mode
              << " factors " << factors << " position " << position;
          if (shape.n_rot == 0) {
            EXPECT_TRUE(same_bits(x, actual)) << "n_rot 0 rotates nothing";
          }
        }
      }
    }
  }
}

struct AttentionCase {
  std::uint32_t head_dim;
  std::uint32_t n_heads;
  std::uint32_t n_kv_heads;
  std::uint32_t block_size;
  std::vector<std::int32_t> positions;  // one per query row
  std::uint32_t window = 0;
  float softcap = 0.0f;
};

std::string describe(const AttentionCase& c) {
  std::ostringstream text;
  text << "head_dim " << c.head_dim << " heads " << c.n_heads << "/" << c.n_kv_heads << " block "
       << c.block_size << " window " << c.window << " softcap " << c.softcap << " positions";
  for (std::int32_t p : c.positions) text << ' ' << p;
  return text.str();
}

// Every query row of `args` with the set's kernel, the heads in two ranges as a caller
// splitting them over threads would.
void simd_attention(const cpu::KernelSet& k, const lpx_attention_args& args, std::uint32_t context) {
  std::vector<float> scratch(k.attention_scratch_floats(context));
  const std::uint32_t split = args.n_heads / 2;
  for (std::uint32_t row = 0; row < args.n_rows; ++row) {
    k.attention_row(args, row, 0, split, scratch.data());
    k.attention_row(args, row, split, args.n_heads, scratch.data());
  }
}

// Every query row of `args` with the set's blocked kernel, in calls of up to `rows` rows x
// `heads` heads of one kv head (a wider group in pieces), as the backend splits them.
void block_attention(const cpu::KernelSet& k, const lpx_attention_args& args,
                     std::uint32_t context, std::uint32_t rows, std::uint32_t heads) {
  std::vector<float> scratch(k.attention_block_scratch_floats(context, args.head_dim));
  const std::uint32_t group = args.n_heads / args.n_kv_heads;
  for (std::uint32_t row = 0; row < args.n_rows; row += rows) {
    for (std::uint32_t kv = 0; kv < args.n_kv_heads; ++kv) {
      for (std::uint32_t head = kv * group; head < (kv + 1) * group; head += heads) {
        k.attention_block(args, row, std::min(row + rows, args.n_rows), head,
                          std::min(head + heads, (kv + 1) * group), scratch.data());
      }
    }
  }
}

// GCC 12 reports a free of a non-heap pointer in this function's inlined vector destructors
// (a known false positive of -Wfree-nonheap-object at -O3); the vectors are ordinary.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
void check_attention(const cpu::KernelSet& k, Random& random, const AttentionCase& c) {
  std::int32_t max_position = 0;
  for (std::int32_t p : c.positions) max_position = std::max(max_position, p);
  const auto context = static_cast<std::uint32_t>(max_position) + 1;
  PagedCache cache(random, context, c.n_kv_heads, c.head_dim, c.block_size);
  if (c.window > 0) {  // positions no row's window holds are NaN: a read there poisons
    for (std::int32_t t = 0; t < max_position; ++t) {
      const bool attended = std::any_of(c.positions.begin(), c.positions.end(), [&](std::int32_t p) {
        return t <= p && p - t < static_cast<std::int32_t>(c.window);
      });
      if (attended) continue;
      for (std::uint32_t h = 0; h < c.n_kv_heads; ++h) {
        for (std::uint32_t d = 0; d < c.head_dim; ++d) {
          cache.k_at(static_cast<std::uint32_t>(t), h, d) = PagedCache::kNaN;
          cache.v_at(static_cast<std::uint32_t>(t), h, d) = PagedCache::kNaN;
        }
      }
    }
    // Blocks no row attends are gone from the table, as the engine's KV cache drops them: a
    // lookup there would read far outside the pool.
    for (std::size_t b = 0; b < cache.block_table.size(); ++b) {
      const auto begin = static_cast<std::int32_t>(b * c.block_size);
      const auto end = static_cast<std::int32_t>((b + 1) * c.block_size);
      const bool used = std::any_of(c.positions.begin(), c.positions.end(), [&](std::int32_t p) {
        return begin <= p && p - static_cast<std::int32_t>(c.window) + 1 < end;
      });
      if (!used) cache.block_table[b] = -1;
    }
  }
  const std::vector<float> q = random.normal(c.positions.size() * c.n_heads * c.head_dim, 2.0f);
  std::vector<float> expected(q.size(), -1.0f);
  std::vector<float> actual(q.size(), -1.0f);
  lpx_attention_args args = ops_test::attention_args(cache, q, expected, c.positions, c.n_heads);
  args.window = c.window;
  args.softcap = c.softcap;
  std::vector<float> scratch(reference::attention_scratch_floats(context));
  for (std::uint32_t row = 0; row < args.n_rows; ++row) {
    reference::attention_row(args, row, 0, c.n_heads, scratch.data());
  }
  args.out = actual.data();
  simd_attention(k, args, context);
  EXPECT_TRUE(same_bits(expected, actual)) << describe(c);
  for (float v : actual) ASSERT_TRUE(std::isfinite(v)) << describe(c);
  const bool blocked = args.n_rows >= 2 && c.head_dim % 8 == 0 && c.head_dim <= 1024;
  ASSERT_EQ(k.attention_block_takes(args), blocked) << describe(c);
  if (!blocked) return;
  const std::uint32_t group = c.n_heads / c.n_kv_heads;
  const std::uint32_t backend_heads = std::min(group, 4u);
  const std::uint32_t splits[][2] = {{static_cast<std::uint32_t>(cpu::kAttentionBlockQueries) / backend_heads,
                                      backend_heads},
                                     {1, 1},
                                     {2, std::min(group, 8u)}};
  for (const auto& [rows, heads] : splits) {
    std::fill(actual.begin(), actual.end(), -1.0f);
    block_attention(k, args, context, rows, heads);
    EXPECT_TRUE(same_bits(expected, actual))
        << "blocked, " << rows << " rows x " << heads << " heads per call: " << describe(c);
  }
}
#pragma GCC diagnostic pop

TEST_P(OpsSimd, AttentionMatchesReferenceForOneQueryRow) {
  Random random(14);
  for (std::uint32_t head_dim : {64u, 128u}) {
    for (std::uint32_t group : {1u, 3u}) {
      for (std::uint32_t block : {16u, 7u}) {
        for (std::int32_t position : {0, 5, 31, 32, 33, 300}) {
          check_attention(k(), random, {head_dim, 2 * group, 2, block, {position}});
        }
      }
    }
  }
}

TEST_P(OpsSimd, AttentionMatchesReferenceForSeveralQueryRows) {
  Random random(15);
  for (std::uint32_t head_dim : {64u, 128u}) {
    for (std::uint32_t group : {1u, 3u}) {
      for (std::uint32_t block : {16u, 7u}) {
        check_attention(k(), random, {head_dim, 3 * group, 3, block, {297, 298, 299}});
        check_attention(k(), random, {head_dim, 3 * group, 3, block, {0, 1, 2}});
        check_attention(
            k(), random,
            {head_dim, group, 1, block, {static_cast<std::int32_t>(random.below(400)), 7, 200}});
      }
    }
  }
}

// A prompt's rows: consecutive positions, several blocks of rows and chunks of positions
// (a chunk holds 8192 floats: 128 positions of 64 dims, 32 of 256), after a cached prefix;
// 72 and 40 dims leave an 8-dim tile after the 16-dim ones; 1024 is the largest head the block
// kernel takes (a chunk of 8 positions), 1032 goes to the row kernel.
TEST_P(OpsSimd, AttentionMatchesReferenceForAPromptOfManyRows) {
  Random random(19);
  const auto run = [](std::int32_t start, std::size_t rows) {
    std::vector<std::int32_t> positions(rows);
    for (std::size_t i = 0; i < rows; ++i) positions[i] = start + static_cast<std::int32_t>(i);
    return positions;
  };
  for (std::uint32_t head_dim : {64u, 256u, 72u, 40u}) {
    for (std::int32_t start : {0, 13, 250}) {
      check_attention(k(), random, {head_dim, 9, 3, 16, run(start, 37)});
      check_attention(k(), random, {head_dim, 4, 1, 7, run(start, 37), 0, 30.0f});
    }
    check_attention(k(), random, {head_dim, 6, 2, 16, run(100, 40), 24});  // window < rows
  }
  check_attention(k(), random, {1024, 2, 1, 16, run(20, 5)});
  check_attention(k(), random, {1032, 2, 1, 16, run(20, 5)});
}

// Rows far apart with windows: the positions between their windows are in no row's range and
// their blocks are gone from the table.
TEST_P(OpsSimd, AttentionMatchesReferenceForRowsFarApartWithWindows) {
  Random random(20);
  for (std::uint32_t window : {4u, 8u, 20u}) {
    check_attention(k(), random, {64, 6, 2, 8, {3, 200, 201, 90, 500}, window});
    check_attention(k(), random, {128, 4, 4, 5, {0, 1000}, window, 5.0f});
  }
}

// Windows that cut inside a 32-position group, on its edge and beyond the context; soft caps.
TEST_P(OpsSimd, AttentionMatchesReferenceWithWindowsAndSoftCaps) {
  Random random(18);
  for (std::uint32_t window : {1u, 4u, 31u, 32u, 33u, 100u, 1000u}) {
    for (float softcap : {0.0f, 5.0f}) {
      for (std::uint32_t block : {16u, 7u}) {
        check_attention(k(), random, {64, 6, 2, block, {300}, window, softcap});
        check_attention(k(), random, {64, 4, 4, block, {0, 40, 95}, window, softcap});
        check_attention(k(), random, {128, 8, 2, block, {63, 64, 65}, window, softcap});
      }
    }
  }
}

TEST_P(OpsSimd, AttentionMatchesReferenceForWideGroups) {
  // 7 and 8 query heads per kv head: more than the kernel batches at once.
  Random random(17);
  check_attention(k(), random, {64, 14, 2, 16, {100}});
  check_attention(k(), random, {64, 14, 2, 16, {100, 101, 40}});
  check_attention(k(), random, {128, 32, 4, 16, {63}});
}

TEST_P(OpsSimd, AttentionMatchesReferenceForOddHeadSizes) {
  // 80 and 96: q.k leftovers added in double; 36: vector tails in every loop; 130: two tiles.
  Random random(16);
  for (std::uint32_t head_dim : {80u, 96u, 36u, 130u, 256u}) {
    check_attention(k(), random, {head_dim, 4, 2, 16, {77}});
    check_attention(k(), random, {head_dim, 4, 2, 5, {77, 12, 130}});
  }
}

INSTANTIATE_TEST_SUITE_P(KernelSets, OpsSimd, ::testing::ValuesIn(test::simd_kernel_sets()),
                         [](const auto& param_info) { return std::string(param_info.param->name); });

}  // namespace
}  // namespace lpx::kernels
