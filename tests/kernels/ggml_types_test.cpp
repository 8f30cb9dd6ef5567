// GGML type ids: names and the mapping to LPX types, checked against the gguf package's
// GGMLQuantizationType (ggml_types.tsv).
#include <lpx/cpp/tensor_types.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <set>
#include <string>

#include "golden_files.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

using golden::GgmlTypeRow;
using golden::read_ggml_type_table;

TEST(GgmlTypes, EveryGgufTypeIdHasItsName) {
  for (const GgmlTypeRow& row : read_ggml_type_table()) {
    const char* name = ggml_type_name(row.id);
    ASSERT_NE(name, nullptr) << "id " << row.id << " (" << row.name << ")";
    EXPECT_EQ(std::string(name), row.name) << "id " << row.id;
  }
}

TEST(GgmlTypes, IdsGgufDoesNotKnowHaveNoNameAndNoLpxType) {
  std::set<std::uint32_t> known;
  for (const GgmlTypeRow& row : read_ggml_type_table()) known.insert(row.id);
  for (std::uint32_t id = 0; id < 1024; ++id) {
    if (known.count(id) != 0) continue;
    EXPECT_EQ(ggml_type_name(id), nullptr) << "id " << id;
    EXPECT_EQ(from_ggml_type(id), std::nullopt) << "id " << id;
  }
  constexpr std::uint32_t kLargest = std::numeric_limits<std::uint32_t>::max();
  EXPECT_EQ(ggml_type_name(kLargest), nullptr);
  EXPECT_EQ(from_ggml_type(kLargest), std::nullopt);
}

// from_ggml_type is the inverse of TensorTypeTraits::ggml_type, and maps nothing else.
TEST(GgmlTypes, MapsExactlyTheSupportedTypesBothWays) {
  std::size_t mapped = 0;
  for (const GgmlTypeRow& row : read_ggml_type_table()) {
    const std::optional<lpx_tensor_type> type = from_ggml_type(row.id);
    if (!type) continue;
    ++mapped;
    const TensorTypeTraits* traits = traits_of(*type);
    ASSERT_NE(traits, nullptr) << row.name;
    EXPECT_EQ(traits->ggml_type, row.id) << row.name;
    EXPECT_EQ(traits->block_elements, row.block_elements) << row.name;
    EXPECT_EQ(traits->block_bytes, row.block_bytes) << row.name;
  }
  std::size_t lpx_types = 0;
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    ++lpx_types;
    EXPECT_EQ(from_ggml_type(traits_of(type)->ggml_type), type) << traits_of(type)->name;
  }
  EXPECT_EQ(mapped, lpx_types);
}

}  // namespace
}  // namespace lpx::kernels::reference
