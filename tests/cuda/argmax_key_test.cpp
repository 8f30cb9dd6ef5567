// The fused argmax's keys (kernels/cuda/argmax_key.cuh) on the host, no GPU needed: the largest
// key over a row must name exactly the index argmax_rows picks -- the lowest index of the
// largest value, -0 equal to +0, every NaN below -inf, a row of NaNs giving index 0 -- and a
// zeroed key must lose to every real pair.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "cuda/argmax_key.cuh"

namespace lpx::kernels::cuda::detail {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// argmax_rows' order, written plainly.
std::int32_t plain_argmax(const std::vector<float>& row) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < row.size(); ++i) {
    if (!std::isnan(row[i]) && (std::isnan(row[best]) || row[i] > row[best])) best = i;
  }
  return static_cast<std::int32_t>(best);
}

std::int32_t key_argmax(const std::vector<float>& row) {
  unsigned long long best = 0;
  for (std::size_t i = 0; i < row.size(); ++i) {
    const unsigned long long key = argmax_key(row[i], static_cast<std::int64_t>(i));
    if (key > best) best = key;
  }
  return argmax_key_index(best);
}

TEST(ArgmaxKey, OrdersPairsAsArgmaxRows) {
  EXPECT_EQ(key_argmax({1.0f, 3.0f, 2.0f}), 1);
  EXPECT_EQ(key_argmax({-5.0f, -1.0f, -3.0f}), 1);          // negatives: larger is closer to 0
  EXPECT_EQ(key_argmax({2.0f, 7.0f, 7.0f, 1.0f}), 1);       // equals: the lowest index
  EXPECT_EQ(key_argmax({-0.0f, 0.0f, -1.0f}), 0);           // -0 equals +0
  EXPECT_EQ(key_argmax({-1.0f, -0.0f, 0.0f}), 1);
  EXPECT_EQ(key_argmax({kNaN, -kInf, kNaN}), 1);            // NaN below -inf
  EXPECT_EQ(key_argmax({kNaN, -kNaN, kNaN}), 0);            // only NaNs: index 0
  EXPECT_EQ(key_argmax({1.0f, kInf, kInf}), 1);
  EXPECT_EQ(key_argmax({std::numeric_limits<float>::denorm_min(), 0.0f}), 0);
  EXPECT_EQ(key_argmax({-std::numeric_limits<float>::denorm_min(), -0.0f}), 1);
}

TEST(ArgmaxKey, MatchesThePlainArgmaxOnRandomRowsWithTiesAndNaNs) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 4.0f);
  std::uniform_int_distribution<int> pick(0, 9);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> row(1 + trial % 300);
    for (float& v : row) {
      const int k = pick(rng);
      v = k == 0 ? kNaN : k == 1 ? std::round(normal(rng)) : k == 2 ? -0.0f : normal(rng);
    }
    ASSERT_EQ(key_argmax(row), plain_argmax(row)) << "trial " << trial;
  }
}

TEST(ArgmaxKey, TheZeroKeyLosesToEveryRealPair) {
  for (const float v : {kNaN, -kInf, -1.0f, -0.0f, 0.0f, kInf}) {
    for (const std::int64_t index : {std::int64_t{0}, std::int64_t{262143}, std::int64_t{0x7FFFFFFE}}) {
      EXPECT_GT(argmax_key(v, index), 0u) << v << " at " << index;
      EXPECT_EQ(argmax_key_index(argmax_key(v, index)), index);
    }
  }
}

}  // namespace
}  // namespace lpx::kernels::cuda::detail
