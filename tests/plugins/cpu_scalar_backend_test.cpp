// The cpu-scalar backend plugin: matmul over every tensor type, checked bit for bit against the
// reference matmul and against a float64 dot product of the gguf-py dequantized weights
// (tests/kernels/golden) with the activations as rounded to the weight type's dot format (ABI
// 1.2: matmul rounds x first; `activations = "q8"`), on random inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>

#include "kernels/matmul_test_support.hpp"
#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"
#include "reference/matmul.hpp"
#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::core {
namespace {

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CpuScalarBackend : public ::testing::TestWithParam<lpx_tensor_type> {
 protected:
  void SetUp() override {
    auto plugin = PluginLibrary::load(test::builtin_plugin("cpu-scalar"), services, "cpu-scalar");
    ASSERT_TRUE(plugin) << plugin.error();
    // The q8 arithmetic (the plugin's llama.cpp mode), which this test holds to the reference.
    ResolvedOptions options = default_options(plugin.value()->description().options);
    options.values["activations"] = std::string("q8");
    auto created = plugin.value()->create(options);
    ASSERT_TRUE(created) << created.error();
    instance = *created;
    api = &instance->api<lpx_quant_backend_api>();
  }
  MetricsRegistry metrics;
  HostServices services{metrics};
  std::shared_ptr<PluginInstance> instance;
  const lpx_quant_backend_api* api = nullptr;
};

TEST_P(CpuScalarBackend, MatmulMatchesAFloat64DotOfTheDequantizedOperands) {
  const auto* traits = kernels::reference::traits_of(GetParam());
  ASSERT_NE(traits, nullptr);
  const std::string golden = std::string(LPX_SOURCE_DIR) + "/tests/kernels/golden/" + traits->name;
  const std::vector<std::uint8_t> blocks = read_bytes(golden + ".blocks.bin");
  const std::vector<std::uint8_t> raw = read_bytes(golden + ".f32.bin");
  std::vector<float> weights(raw.size() / 4);
  std::memcpy(weights.data(), raw.data(), weights.size() * 4);

  const std::size_t n = weights.size();
  const std::size_t columns = traits->block_elements > 1 ? std::size_t{traits->block_elements} * 4
                              : n % 64 == 0              ? 64
                                                         : n;
  ASSERT_EQ(n % columns, 0u);
  const std::size_t rows = n / columns;
  lpx_tensor_view w{};
  w.name = "w";
  w.type = GetParam();
  w.n_dims = 2;
  w.dims[0] = static_cast<std::int64_t>(columns);
  w.dims[1] = static_cast<std::int64_t>(rows);
  w.data = blocks.data();
  w.size_bytes = blocks.size();
  ASSERT_EQ(api->supports_type(instance->raw(), GetParam()), 1);

  const std::size_t batch = 3;
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(batch * columns);
  for (float& v : x) v = normal(rng);
  std::vector<float> y(batch * rows, -1.0f);
  ASSERT_EQ(api->matmul(instance->raw(), &w, x.data(), y.data(), batch), nullptr);

  std::vector<float> expected(batch * rows);
  std::vector<std::uint8_t> activations;
  kernels::reference::matmul(GetParam(), blocks.data(), rows, columns, x.data(), batch,
                             expected.data(), activations);
  EXPECT_EQ(std::memcmp(expected.data(), y.data(), y.size() * 4), 0) << "not the reference";

  const std::size_t row_bytes = blocks.size() / rows;
  const std::size_t activation_bytes =
      kernels::reference::activation_row_bytes(GetParam(), columns);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t b = 0; b < batch; ++b) {
      double magnitude = 0;
      const double sum = kernels::matmul_test::exact_dot(
          GetParam(), blocks.data() + r * row_bytes, &weights[r * columns],
          activations.data() + b * activation_bytes, columns, magnitude);
      const float got = y[b * rows + r];
      if (!std::isfinite(sum) || !std::isfinite(magnitude)) {
        EXPECT_FALSE(std::isfinite(got)) << "row " << r << " holds inf/NaN weights";
        continue;
      }
      // The goldens include extreme scales; where the terms approach FLT_MAX a float accumulator
      // may overflow where float64 does not, so only rows within float range are compared.
      if (magnitude > 1e37) continue;
      EXPECT_NEAR(static_cast<double>(got), sum, 1e-5 * magnitude + 1e-30)
          << traits->name << " row " << r << " batch " << b;
    }
  }

  std::vector<float> row(columns);
  ASSERT_EQ(
      api->dequantize_row(instance->raw(), &w, static_cast<std::int64_t>(rows - 1), row.data()),
      nullptr);
  EXPECT_EQ(std::memcmp(row.data(), &weights[(rows - 1) * columns], columns * 4), 0);
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CpuScalarBackend,
                         ::testing::Values(LPX_TENSOR_F32, LPX_TENSOR_F16, LPX_TENSOR_BF16,
                                           LPX_TENSOR_Q8_0, LPX_TENSOR_Q4_0, LPX_TENSOR_Q4_1,
                                           LPX_TENSOR_Q5_0, LPX_TENSOR_Q5_1, LPX_TENSOR_Q4_K,
                                           LPX_TENSOR_Q5_K, LPX_TENSOR_Q6_K, LPX_TENSOR_Q8_K),
                         [](const auto& param_info) {
                           return std::string(
                               kernels::reference::traits_of(param_info.param)->name);
                         });

TEST_F(CpuScalarBackend, RefusesBadShapesAndRowsWithAStatus) {
  std::vector<float> data(8, 1.0f);
  lpx_tensor_view w{};
  w.type = LPX_TENSOR_Q4_0;
  w.n_dims = 2;
  w.dims[0] = 8;  // not a whole 32-element block
  w.dims[1] = 1;
  w.data = data.data();
  w.size_bytes = 32;
  float x[8] = {}, y[1] = {};
  lpx_status* status = api->matmul(instance->raw(), &w, x, y, 1);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, LPX_ERR_UNSUPPORTED);
  status->release(status);

  w.type = LPX_TENSOR_F32;
  w.size_bytes = 16;  // 4 floats for an 8-float row
  status = api->matmul(instance->raw(), &w, x, y, 1);
  ASSERT_NE(status, nullptr);
  EXPECT_STREQ(status->message, "weight data is shorter than its shape");
  status->release(status);

  w.size_bytes = 32;
  status = api->dequantize_row(instance->raw(), &w, 1, y);
  ASSERT_NE(status, nullptr);
  EXPECT_STREQ(status->message, "row 1 of 1 does not exist");
  status->release(status);
  EXPECT_EQ(api->supports_type(instance->raw(), 99), 0);
}

}  // namespace
}  // namespace lpx::core
