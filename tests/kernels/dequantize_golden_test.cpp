// Bit-exact dequantization: for every LPX tensor type, the reference decoder must produce
// exactly the f32 bit patterns the gguf Python package produced for the same blocks
// (goldens written by tools/make_dequant_goldens.py).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <iomanip>
#include <sstream>

#include "golden_files.hpp"
#include "reference/dequantize.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

using golden::read_golden_file;

struct Golden {
  const TensorTypeTraits* traits = nullptr;
  std::vector<std::uint8_t> blocks;
  std::vector<float> expected;
  std::size_t n_elements = 0;
};

Golden load_golden(std::int32_t type) {
  Golden golden;
  golden.traits = traits_of(type);
  const std::string name = golden.traits->name;
  golden.blocks = read_golden_file(name + ".blocks.bin");
  const std::vector<std::uint8_t> values = read_golden_file(name + ".f32.bin");
  EXPECT_FALSE(golden.blocks.empty()) << name;
  EXPECT_EQ(golden.blocks.size() % golden.traits->block_bytes, 0u) << name;
  golden.n_elements = golden.blocks.size() / golden.traits->block_bytes *
                      golden.traits->block_elements;
  EXPECT_EQ(values.size(), golden.n_elements * sizeof(float)) << name;
  golden.expected.resize(values.size() / sizeof(float));
  std::memcpy(golden.expected.data(), values.data(), golden.expected.size() * sizeof(float));
  return golden;
}

std::uint32_t bits_of(float value) { return std::bit_cast<std::uint32_t>(value); }

std::string describe_float(float value) {
  std::ostringstream text;
  text << "0x" << std::hex << std::setw(8) << std::setfill('0') << bits_of(value)
       << " (" << std::setprecision(9) << std::defaultfloat << value << ")";
  return text.str();
}

// Compares bit patterns; on a mismatch reports the first few by block and element.
void expect_same_bits(const Golden& golden, const std::vector<float>& actual) {
  ASSERT_EQ(actual.size(), golden.expected.size());
  if (std::memcmp(actual.data(), golden.expected.data(), actual.size() * sizeof(float)) == 0) {
    return;
  }
  const std::size_t per_block = golden.traits->block_elements;
  int reported = 0;
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    if (bits_of(actual[i]) == bits_of(golden.expected[i])) continue;
    ++mismatches;
    if (reported++ < 10) {
      ADD_FAILURE() << golden.traits->name << ": block " << i / per_block << ", element "
                    << i % per_block << ": expected " << describe_float(golden.expected[i])
                    << ", got " << describe_float(actual[i]);
    }
  }
  ADD_FAILURE() << golden.traits->name << ": " << mismatches << " of " << actual.size()
                << " values differ";
}

class DequantizeGolden : public ::testing::TestWithParam<std::int32_t> {};

TEST_P(DequantizeGolden, WholeRowMatchesGgufBitForBit) {
  const Golden golden = load_golden(GetParam());
  ASSERT_GT(golden.n_elements, 0u);
  std::vector<float> actual(golden.n_elements);
  ASSERT_EQ(dequantize_row(GetParam(), golden.blocks.data(), golden.n_elements, actual.data()),
            DequantizeStatus::ok);
  expect_same_bits(golden, actual);
}

// Each block decodes on its own (no state carried between blocks), from any address.
TEST_P(DequantizeGolden, BlockByBlockFromUnalignedMemoryMatchesGgufBitForBit) {
  const Golden golden = load_golden(GetParam());
  const TensorTypeTraits& traits = *golden.traits;
  std::vector<std::uint8_t> shifted(traits.block_bytes + 1);
  std::vector<float> actual(golden.n_elements);
  for (std::size_t b = 0; b < golden.blocks.size() / traits.block_bytes; ++b) {
    std::memcpy(shifted.data() + 1, golden.blocks.data() + b * traits.block_bytes,
                traits.block_bytes);
    ASSERT_EQ(dequantize_row(GetParam(), shifted.data() + 1, traits.block_elements,
                             actual.data() + b * traits.block_elements),
              DequantizeStatus::ok);
  }
  expect_same_bits(golden, actual);
}

// The goldens exercise real values, not a degenerate all-zero row.
TEST_P(DequantizeGolden, GoldenValuesAreNotAllZero) {
  const Golden golden = load_golden(GetParam());
  std::size_t nonzero = 0;
  for (float value : golden.expected) nonzero += value != 0.0f ? 1 : 0;
  EXPECT_GT(nonzero, golden.expected.size() / 2) << golden.traits->name;
}

std::vector<std::int32_t> all_tensor_types() {
  std::vector<std::int32_t> types;
  for (std::int32_t type = LPX_TENSOR_F32; is_valid_tensor_type(type); ++type) {
    types.push_back(type);
  }
  return types;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DequantizeGolden, ::testing::ValuesIn(all_tensor_types()),
                         [](const ::testing::TestParamInfo<std::int32_t>& param_info) {
                           return std::string(traits_of(param_info.param)->name);
                         });

}  // namespace
}  // namespace lpx::kernels::reference
