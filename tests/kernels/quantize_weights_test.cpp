// The weight quantizers byte for byte against llama.cpp's (ggml_quantize_chunk), through the
// SHA-256 of what each makes of the inputs tools/make_quantize_fixtures.py defines; the inputs
// are regenerated here exactly as that tool generates them.
#include "reference/quantize_weights.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "reference/tensor_types.hpp"
#include "util/sha256.hpp"

namespace lpx::kernels::reference {
namespace {

boost::json::object fixture() {
  std::ifstream in(LPX_QUANTIZE_FIXTURE);
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str()).as_object();
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = x;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::int64_t integer(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::int64_t>(splitmix64(seed * 1'000'003ull + i) >> 40) - (std::int64_t{1} << 23);
}

// The tool's value(): an integer times 2^-exponent, exact in float32.
std::vector<float> dataset(const boost::json::object& d, std::int64_t rows, std::int64_t cols) {
  const auto seed = static_cast<std::uint64_t>(d.at("seed").as_int64());
  const int exponent = static_cast<int>(d.at("exponent").as_int64());
  const std::string twist(d.at("twist").as_string());
  std::vector<float> out;
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto i = static_cast<std::uint64_t>(r * cols + c);
      std::int64_t n = twist == "constant" ? (r == 0 ? 0 : integer(seed, static_cast<std::uint64_t>(r)))
                                           : integer(seed, i);
      if (twist == "positive") n = std::llabs(n);
      if (twist == "outliers" && i % 97 == 0) n *= 1024;
      out.push_back(static_cast<float>(std::ldexp(static_cast<double>(n), -exponent)));
    }
  }
  return out;
}

std::string sha256(const void* data, std::size_t size) { return core::sha256_hex(data, size); }

struct Named {
  const char* name;
  lpx_tensor_type type;
};
constexpr Named kTypes[] = {{"F16", LPX_TENSOR_F16},   {"BF16", LPX_TENSOR_BF16}, {"Q8_0", LPX_TENSOR_Q8_0},
                            {"Q4_0", LPX_TENSOR_Q4_0}, {"Q4_1", LPX_TENSOR_Q4_1}, {"Q5_0", LPX_TENSOR_Q5_0},
                            {"Q5_1", LPX_TENSOR_Q5_1}, {"Q4_K", LPX_TENSOR_Q4_K}, {"Q5_K", LPX_TENSOR_Q5_K},
                            {"Q6_K", LPX_TENSOR_Q6_K}};

TEST(QuantizeWeights, TheInputsAreTheToolsBitForBit) {
  const boost::json::object f = fixture();
  const auto rows = f.at("rows").as_int64(), cols = f.at("cols").as_int64();
  for (const auto& [name, d] : f.at("datasets").as_object()) {
    const std::vector<float> values = dataset(d.as_object(), rows, cols);
    EXPECT_EQ(sha256(values.data(), values.size() * sizeof(float)), d.at("input_sha256").as_string())
        << name;
  }
}

TEST(QuantizeWeights, EveryTypeWritesWhatLlamaCppWrites) {
  const boost::json::object f = fixture();
  const auto rows = f.at("rows").as_int64(), cols = f.at("cols").as_int64();
  const auto& expected = f.at("sha256").as_object();
  for (const Named& t : kTypes) {
    ASSERT_TRUE(can_quantize_weights(t.type)) << t.name;
    const std::uint64_t row_bytes = *row_size_bytes(t.type, static_cast<std::uint64_t>(cols));
    for (const auto& [name, d] : f.at("datasets").as_object()) {
      const std::vector<float> values = dataset(d.as_object(), rows, cols);
      std::vector<std::uint8_t> out(row_bytes * static_cast<std::uint64_t>(rows), 0xAA);
      quantize_weight_rows(t.type, values.data(), rows, cols, out.data());
      EXPECT_EQ(sha256(out.data(), out.size()), expected.at(t.name).at(name).as_string())
          << t.name << " of " << std::string(name);
    }
  }
}

TEST(QuantizeWeights, OnlyTheTypesItWritesAreOffered) {
  EXPECT_FALSE(can_quantize_weights(LPX_TENSOR_F32));
  EXPECT_FALSE(can_quantize_weights(LPX_TENSOR_Q8_K));
}

}  // namespace
}  // namespace lpx::kernels::reference
