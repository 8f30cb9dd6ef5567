// Rounding activations to each weight type's dot format: the reference's defining cases (zero
// blocks, ties to even, the q8_1 sum, q8_k's signed scale and bsums, f16/bf16 rounding), and the
// AVX2 version byte for byte against the reference on random rows of every format.
#include "reference/quantize_activations.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "kernel_set_params.hpp"
#include "matmul_test_support.hpp"
#include "reference/half_precision.hpp"

namespace lpx::kernels::reference {
namespace {

using matmul_test::kAllTypes;
using matmul_test::type_name;

std::uint16_t u16_at(const std::vector<std::uint8_t>& bytes, std::size_t offset) {
  std::uint16_t v;
  std::memcpy(&v, &bytes[offset], 2);
  return v;
}

std::vector<std::uint8_t> quantize(std::int32_t type, const std::vector<float>& x) {
  std::vector<std::uint8_t> out(activation_row_bytes(type, x.size()), 0xAB);
  quantize_activations(type, x.data(), x.size(), 1, out.data());
  return out;
}

TEST(DotFormat, FollowsTheWeightType) {
  EXPECT_EQ(dot_format_of(LPX_TENSOR_F32), DotFormat::f32);
  EXPECT_EQ(dot_format_of(LPX_TENSOR_F16), DotFormat::f16);
  EXPECT_EQ(dot_format_of(LPX_TENSOR_BF16), DotFormat::bf16);
  for (auto t : {LPX_TENSOR_Q8_0, LPX_TENSOR_Q4_0, LPX_TENSOR_Q5_0}) {
    EXPECT_EQ(dot_format_of(t), DotFormat::q8_0);
  }
  for (auto t : {LPX_TENSOR_Q4_1, LPX_TENSOR_Q5_1}) EXPECT_EQ(dot_format_of(t), DotFormat::q8_1);
  for (auto t : {LPX_TENSOR_Q4_K, LPX_TENSOR_Q5_K, LPX_TENSOR_Q6_K, LPX_TENSOR_Q8_K}) {
    EXPECT_EQ(dot_format_of(t), DotFormat::q8_k);
  }
  EXPECT_FALSE(dot_format_of(0).has_value());
  EXPECT_FALSE(dot_format_of(LPX_TENSOR_Q8_K + 1).has_value());
}

TEST(DotFormat, RowBytes) {
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_F32, 5), 20u);
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_F16, 5), 10u);
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_Q4_0, 64), 68u);
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_Q4_1, 64), 72u);
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_Q6_K, 512), 584u);
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_Q4_1, 48), 0u);  // not whole blocks
  EXPECT_EQ(activation_row_bytes(LPX_TENSOR_Q4_K, 128), 0u);
  EXPECT_EQ(activation_row_bytes(99, 256), 0u);
}

TEST(QuantizeActivations, AllZeroBlocksHaveZeroScaleAndValues) {
  std::vector<float> x(512, 0.0f);
  x[300] = 1.0f;  // the second q8_k block (and ninth q8_0 block) is not all zero
  const auto q8_0 = quantize(LPX_TENSOR_Q8_0, x);
  for (std::size_t i = 0; i < 34; ++i) EXPECT_EQ(q8_0[i], 0) << i;
  const auto q8_1 = quantize(LPX_TENSOR_Q4_1, x);
  for (std::size_t i = 0; i < 36; ++i) EXPECT_EQ(q8_1[i], 0) << i;
  const auto q8_k = quantize(LPX_TENSOR_Q4_K, x);
  for (std::size_t i = 0; i < 292; ++i) EXPECT_EQ(q8_k[i], 0) << i;
  EXPECT_NE(q8_k[292 + 3], 0);  // the second block's d
}

// With amax = 127 the multiplier is exactly 1, so the halves are exact ties.
TEST(QuantizeActivations, Q8TiesRoundToEven) {
  std::vector<float> x(32, 0.0f);
  const float values[] = {127.0f, 0.5f, 1.5f, 2.5f, -0.5f, -2.5f, -3.5f, 126.5f};
  std::copy(std::begin(values), std::end(values), x.begin());
  const std::int8_t expected[] = {127, 0, 2, 2, 0, -2, -4, 126};
  const auto q8_0 = quantize(LPX_TENSOR_Q8_0, x);
  EXPECT_EQ(u16_at(q8_0, 0), 0x3C00);  // d = 127 / 127 = 1
  const auto q8_1 = quantize(LPX_TENSOR_Q5_1, x);
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(static_cast<std::int8_t>(q8_0[2 + i]), expected[i]) << i;
    EXPECT_EQ(static_cast<std::int8_t>(q8_1[4 + i]), expected[i]) << i;
  }
  // s = f16(d * sum(q)) = 127 + 0 + 2 + 2 + 0 - 2 - 4 + 126 = 251
  EXPECT_EQ(u16_at(q8_1, 2), f32_to_f16(251.0f));
}

TEST(QuantizeActivations, Q8KScaleFollowsTheSignOfTheLargestElement) {
  std::vector<float> x(256, 0.25f);
  x[7] = -2.0f;
  x[9] = 2.0f;  // same magnitude, later: the first one sets the sign
  const auto q = quantize(LPX_TENSOR_Q4_K, x);
  float d;
  std::memcpy(&d, q.data(), 4);
  EXPECT_EQ(d, 1.0f / (-127.0f / -2.0f));
  EXPECT_EQ(static_cast<std::int8_t>(q[4 + 7]), -127);
  EXPECT_EQ(static_cast<std::int8_t>(q[4 + 9]), 127);
  EXPECT_EQ(static_cast<std::int8_t>(q[4 + 0]), 16);  // 0.25 * 63.5 = 15.875
  // bsums: group 0 holds 14 x 16, -127 and 127
  EXPECT_EQ(static_cast<std::int16_t>(u16_at(q, 260)), 14 * 16);
  EXPECT_EQ(static_cast<std::int16_t>(u16_at(q, 262)), 16 * 16);
}

TEST(QuantizeActivations, HalfFormatsRoundToNearestEven) {
  const std::vector<float> x = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 1.0f + 0x1p-8f,
                                1.0f + 3 * 0x1p-8f};
  const auto f16 = quantize(LPX_TENSOR_F16, x);
  EXPECT_EQ(u16_at(f16, 0), 0x3C00);
  EXPECT_EQ(u16_at(f16, 2), 0x3C02);
  const auto bf16 = quantize(LPX_TENSOR_BF16, x);
  EXPECT_EQ(u16_at(bf16, 4), 0x3F80);
  EXPECT_EQ(u16_at(bf16, 6), 0x3F82);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7F800001u)) & 0x7FC0u, 0x7FC0u);  // quiet NaN
}

TEST(QuantizeActivations, F32IsACopy) {
  const std::vector<float> x = {1.5f, -2.25f, 3.0f};
  const auto bytes = quantize(LPX_TENSOR_F32, x);
  EXPECT_EQ(std::memcmp(bytes.data(), x.data(), 12), 0);
}

class QuantizeActivationsSimd : public test::SetAndTypeTest {};

TEST_P(QuantizeActivationsSimd, SameBytesAsTheReference) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  const std::size_t block = dot_block_elements(*dot_format_of(type));
  matmul_test::Random random(static_cast<std::uint32_t>(type) * 17u);
  for (std::size_t blocks : {1u, 3u, 7u}) {
    for (std::size_t batch : {1u, 2u, 5u}) {
      const std::size_t columns = block == 1 ? blocks * 11 : blocks * block;
      std::vector<float> x = random.activations(batch, columns);
      // An all-zero block, exact ties and repeated maxima in the second row.
      if (batch > 1) {
        for (std::size_t c = 0; c < std::min(columns, block); ++c) x[columns + c] = 0.0f;
        for (std::size_t c = block; c < columns; ++c) {
          x[columns + c] = static_cast<float>(static_cast<int>(c % 255) - 127) * 0.5f;
        }
      }
      const std::size_t bytes = activation_row_bytes(type, columns) * batch;
      std::vector<std::uint8_t> expected(bytes, 0x11), actual(bytes, 0x22);
      quantize_activations(type, x.data(), columns, batch, expected.data());
      k.quantize_activations(type, x.data(), columns, batch, actual.data());
      EXPECT_EQ(expected, actual) << type_name(type) << " columns " << columns << " batch "
                                  << batch;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KernelSets, QuantizeActivationsSimd, ::testing::ValuesIn(test::every_set_and_type(kAllTypes)),
                         test::set_and_type_name);

}  // namespace
}  // namespace lpx::kernels::reference
