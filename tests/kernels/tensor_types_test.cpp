// Tensor-type traits and row sizes, checked against gguf's GGML_QUANT_SIZES (ggml_types.tsv).
#include "reference/tensor_types.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <limits>

#include "golden_files.hpp"
#include <lpx/cpp/tensor_types.hpp>

namespace lpx::kernels::reference {
namespace {

using golden::GgmlTypeRow;
using golden::read_ggml_type_table;

constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();

std::vector<const TensorTypeTraits*> all_lpx_types() {
  std::vector<const TensorTypeTraits*> types;
  for (std::int32_t type = LPX_TENSOR_F32; type <= LPX_TENSOR_Q8_K; ++type) {
    types.push_back(traits_of(type));
  }
  return types;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// The oracle for row sizes: the byte count with the compiler's overflow check.
std::optional<std::uint64_t> expected_row_size(const TensorTypeTraits& traits, std::uint64_t n) {
  if (n % traits.block_elements != 0) return std::nullopt;
  std::uint64_t bytes = 0;
  const std::uint64_t n_blocks = n / traits.block_elements;
  const std::uint64_t bytes_per_block = traits.block_bytes;
  if (__builtin_mul_overflow(n_blocks, bytes_per_block, &bytes)) return std::nullopt;
  return bytes;
}

TEST(TensorTypes, EveryEnumValueHasTraitsForItself) {
  for (std::int32_t type = LPX_TENSOR_F32; type <= LPX_TENSOR_Q8_K; ++type) {
    const TensorTypeTraits* traits = traits_of(type);
    ASSERT_NE(traits, nullptr) << type;
    EXPECT_EQ(traits->type, type);
    EXPECT_TRUE(is_valid_tensor_type(type));
  }
}

TEST(TensorTypes, OtherValuesAreNotTensorTypes) {
  for (std::int32_t type : {0, -1, static_cast<std::int32_t>(LPX_TENSOR_Q8_K) + 1, 1000,
                            std::numeric_limits<std::int32_t>::min(),
                            std::numeric_limits<std::int32_t>::max()}) {
    EXPECT_EQ(traits_of(type), nullptr) << type;
    EXPECT_FALSE(is_valid_tensor_type(type)) << type;
    EXPECT_EQ(row_size_bytes(type, 256), std::nullopt) << type;
  }
}

// Name, GGML id and block geometry of each LPX type agree with the gguf package's table.
TEST(TensorTypes, TraitsMatchTheGgufPackage) {
  const std::vector<GgmlTypeRow> table = read_ggml_type_table();
  for (const TensorTypeTraits* traits : all_lpx_types()) {
    const auto row = std::find_if(table.begin(), table.end(), [&](const GgmlTypeRow& r) {
      return lower(r.name) == traits->name;
    });
    ASSERT_NE(row, table.end()) << traits->name << " is not a GGML type name";
    EXPECT_EQ(traits->ggml_type, row->id) << traits->name;
    EXPECT_EQ(traits->block_elements, row->block_elements) << traits->name;
    EXPECT_EQ(traits->block_bytes, row->block_bytes) << traits->name;
  }
}

TEST(TensorTypes, RowSizeIsBlocksTimesBlockBytes) {
  for (const TensorTypeTraits* traits : all_lpx_types()) {
    for (std::uint64_t n_blocks : {0u, 1u, 7u, 4096u}) {
      EXPECT_EQ(row_size_bytes(traits->type, n_blocks * traits->block_elements),
                n_blocks * traits->block_bytes)
          << traits->name << " x " << n_blocks << " blocks";
    }
  }
}

TEST(TensorTypes, RowSizeRefusesPartialBlocks) {
  for (const TensorTypeTraits* traits : all_lpx_types()) {
    if (traits->block_elements == 1) continue;
    for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t{traits->block_elements} - 1,
                            std::uint64_t{traits->block_elements} + 1, kMaxU64}) {
      EXPECT_EQ(row_size_bytes(traits->type, n), std::nullopt) << traits->name << " n=" << n;
    }
  }
}

// Around the largest row whose byte count fits in 64 bits, for every type.
TEST(TensorTypes, RowSizeRefusesByteCountsBeyond64Bits) {
  for (const TensorTypeTraits* traits : all_lpx_types()) {
    const std::uint64_t elements = traits->block_elements;
    const std::uint64_t max_blocks = kMaxU64 / traits->block_bytes;
    std::vector<std::uint64_t> counts = {kMaxU64 - kMaxU64 % elements};
    if (max_blocks <= kMaxU64 / elements) counts.push_back(max_blocks * elements);
    if (max_blocks + 1 <= kMaxU64 / elements) counts.push_back((max_blocks + 1) * elements);
    for (std::uint64_t n : counts) {
      EXPECT_EQ(row_size_bytes(traits->type, n), expected_row_size(*traits, n))
          << traits->name << " n=" << n;
    }
  }
  // Types with more bytes than elements per block do overflow at the largest element count.
  const TensorTypeTraits& f32 = *traits_of(LPX_TENSOR_F32);
  ASSERT_GT(f32.block_bytes, f32.block_elements);
  EXPECT_EQ(row_size_bytes(LPX_TENSOR_F32, kMaxU64 / f32.block_bytes + 1), std::nullopt);
  EXPECT_EQ(row_size_bytes(LPX_TENSOR_F32, kMaxU64 / f32.block_bytes),
            kMaxU64 / f32.block_bytes * f32.block_bytes);
}

}  // namespace
}  // namespace lpx::kernels::reference
