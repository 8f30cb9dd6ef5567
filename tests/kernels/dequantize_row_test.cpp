// dequantize_row's refusals: unknown types and partial blocks are errors that write nothing.
#include "reference/dequantize.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

constexpr float kUntouched = -12345.0f;

TEST(DequantizeRow, RefusesUnknownTypesWithoutWriting) {
  const std::vector<std::uint8_t> src(1024, 0x11);
  for (std::int32_t type : {0, -1, static_cast<std::int32_t>(LPX_TENSOR_Q8_K) + 1,
                            std::numeric_limits<std::int32_t>::max()}) {
    std::vector<float> dst(256, kUntouched);
    EXPECT_EQ(dequantize_row(type, src.data(), 256, dst.data()),
              DequantizeStatus::unsupported_type)
        << type;
    EXPECT_EQ(dst, std::vector<float>(256, kUntouched)) << type;
  }
}

TEST(DequantizeRow, RefusesPartialBlocksWithoutWriting) {
  const std::vector<std::uint8_t> src(1024, 0x11);
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    const std::size_t block = traits_of(type)->block_elements;
    if (block == 1) continue;
    for (std::size_t n : {std::size_t{1}, block - 1, block + 1}) {
      std::vector<float> dst(2 * block, kUntouched);
      EXPECT_EQ(dequantize_row(type, src.data(), n, dst.data()),
                DequantizeStatus::not_a_multiple_of_block)
          << traits_of(type)->name << " n=" << n;
      EXPECT_EQ(dst, std::vector<float>(2 * block, kUntouched)) << traits_of(type)->name;
    }
  }
}

TEST(DequantizeRow, EmptyRowIsFineAndWritesNothing) {
  float dst = kUntouched;
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    EXPECT_EQ(dequantize_row(type, nullptr, 0, &dst), DequantizeStatus::ok);
  }
  EXPECT_EQ(dst, kUntouched);
}

TEST(DequantizeRow, WritesExactlyTheRowAndNoFurther) {
  const std::vector<std::uint8_t> src(2 * 292, 0x5A);
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    const std::size_t block = traits_of(type)->block_elements;
    std::vector<float> dst(2 * block + 1, kUntouched);
    ASSERT_EQ(dequantize_row(type, src.data(), 2 * block, dst.data()), DequantizeStatus::ok);
    EXPECT_EQ(dst.back(), kUntouched) << traits_of(type)->name;
  }
}

TEST(DequantizeRow, StatusesHaveDistinctDescriptions) {
  const std::string ok = describe(DequantizeStatus::ok);
  const std::string bad_type = describe(DequantizeStatus::unsupported_type);
  const std::string bad_length = describe(DequantizeStatus::not_a_multiple_of_block);
  EXPECT_FALSE(bad_type.empty());
  EXPECT_FALSE(bad_length.empty());
  EXPECT_NE(ok, bad_type);
  EXPECT_NE(bad_type, bad_length);
}

}  // namespace
}  // namespace lpx::kernels::reference
