// The `activations = "f32"` option of the `cpu` and `cpu-scalar` plugins, through the plugin ABI:
// both give the same bits for every weight type, batch and thread count, the reference
// (reference::dot_rows_f32) bits; "i16" is the default and the three modes differ; a bad value
// is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cpu_backend_test_support.hpp"
#include "matmul_test_support.hpp"
#include "reference/matmul_f32.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::core {
namespace {

using cpu_backend_test::Backend;
using cpu_backend_test::view;
using kernels::matmul_test::kAllTypes;
using kernels::matmul_test::same_bits;
using kernels::matmul_test::type_name;

class CpuBackendF32 : public cpu_backend_test::BackendTest {};

const std::map<std::string, OptionValue> kF32 = {{"activations", std::string("f32")}};

std::map<std::string, OptionValue> f32_with_threads(std::int64_t threads) {
  auto options = kF32;
  options["threads"] = threads;
  return options;
}

std::vector<float> reference_f32(std::int32_t type, const std::vector<std::uint8_t>& w,
                                 std::size_t rows, std::size_t columns, const std::vector<float>& x,
                                 std::size_t batch) {
  std::vector<float> y(rows * batch, -3.0f);
  const auto row_bytes =
      static_cast<std::size_t>(*kernels::reference::row_size_bytes(type, columns));
  kernels::reference::dot_rows_f32(
      {type, w.data(), row_bytes, rows, columns, x.data(), batch, y.data()}, 0, rows);
  return y;
}

TEST_F(CpuBackendF32, CpuAndCpuScalarGiveTheReferenceBitsForEveryType) {
  Backend scalar(services, "cpu-scalar", kF32);
  Backend cpu(services, "cpu", f32_with_threads(3));
  kernels::matmul_test::Random random(31);
  for (std::int32_t type : kAllTypes) {
    const std::size_t block = kernels::reference::traits_of(type)->block_elements;
    const std::size_t columns = block == 1 ? 136 : 2 * block;  // f32/f16/bf16: 8 leftovers
    for (std::size_t rows : {std::size_t{67}, std::size_t{64}}) {
      const auto data = random.weights(type, rows, columns);
      const lpx_tensor_view w = view(type, rows, columns, data);
      for (std::size_t batch : {1u, 2u, 3u, 5u, 9u}) {
        const auto x = random.activations(batch, columns);
        const auto expected = reference_f32(type, data, rows, columns, x, batch);
        EXPECT_TRUE(same_bits(expected, scalar.matmul(w, x, batch)))
            << "cpu-scalar " << type_name(type) << " rows " << rows << " batch " << batch;
        EXPECT_TRUE(same_bits(expected, cpu.matmul(w, x, batch)))
            << "cpu " << type_name(type) << " rows " << rows << " batch " << batch;
      }
    }
  }
}

// Every output has the same bits whatever the thread count and whichever batch it is part of;
// Q4_K goes through the per-thread dequantization scratch.
TEST_F(CpuBackendF32, ResultsDoNotDependOnThreadsOrBatch) {
  kernels::matmul_test::Random random(9);
  const std::size_t rows = 301, columns = 768;
  for (std::int32_t type : {LPX_TENSOR_Q4_1, LPX_TENSOR_Q4_K, LPX_TENSOR_F16}) {
    const auto data = random.weights(type, rows, columns);
    const lpx_tensor_view w = view(type, rows, columns, data);
    const auto x = random.activations(5, columns);
    const auto expected = reference_f32(type, data, rows, columns, x, 5);
    for (std::int64_t threads : {1, 2, 4}) {
      Backend cpu(services, "cpu", f32_with_threads(threads));
      EXPECT_TRUE(same_bits(expected, cpu.matmul(w, x, 5)))
          << type_name(type) << " threads " << threads;
      const std::vector<float> x1(x.begin() + 2 * columns, x.begin() + 3 * columns);
      const std::vector<float> row_2(expected.begin() + 2 * rows, expected.begin() + 3 * rows);
      EXPECT_TRUE(same_bits(row_2, cpu.matmul(w, x1, 1)))
          << type_name(type) << " threads " << threads << " alone";
    }
  }
}

// After reserve(), f32 matmuls of the reserved width run (the scratch is sized there).
TEST_F(CpuBackendF32, ReserveCoversTheDequantizationScratch) {
  Backend scalar(services, "cpu-scalar", kF32);
  Backend cpu(services, "cpu", f32_with_threads(2));
  const lpx_backend_limits limits{sizeof(lpx_backend_limits), 4, 512, 16, 4, 32};
  for (const Backend* b : {&scalar, &cpu}) {
    b->ok([&](const auto& api, lpx_instance* i) { return api.reserve(i, &limits); });
  }
  kernels::matmul_test::Random random(10);
  for (std::int32_t type : {LPX_TENSOR_Q6_K, LPX_TENSOR_Q8_0}) {
    const auto data = random.weights(type, 40, 512);
    const lpx_tensor_view w = view(type, 40, 512, data);
    const auto x = random.activations(4, 512);
    EXPECT_TRUE(same_bits(scalar.matmul(w, x, 4), cpu.matmul(w, x, 4))) << type_name(type);
  }
}

// The three modes are three arithmetics: i16 (the default) differs from both q8 and f32, and
// is far closer to f32.
TEST_F(CpuBackendF32, I16IsTheDefaultAndTheModesDiffer) {
  kernels::matmul_test::Random random(12);
  const std::size_t rows = 64, columns = 256;
  const auto data = random.weights(LPX_TENSOR_Q4_1, rows, columns);
  const lpx_tensor_view w = view(LPX_TENSOR_Q4_1, rows, columns, data);
  const auto x = random.activations(2, columns);
  for (const char* plugin : {"cpu", "cpu-scalar"}) {
    Backend by_default(services, plugin);
    Backend i16(services, plugin, {{"activations", std::string("i16")}});
    Backend q8(services, plugin, {{"activations", std::string("q8")}});
    Backend f32(services, plugin, kF32);
    const auto y = by_default.matmul(w, x, 2);
    const auto y_q8 = q8.matmul(w, x, 2), y_f32 = f32.matmul(w, x, 2);
    EXPECT_TRUE(same_bits(y, i16.matmul(w, x, 2))) << plugin;
    EXPECT_FALSE(same_bits(y, y_q8)) << plugin;
    EXPECT_FALSE(same_bits(y, y_f32)) << plugin;
    double i16_off = 0, q8_off = 0;
    for (std::size_t i = 0; i < y.size(); ++i) {
      i16_off += std::fabs(static_cast<double>(y[i]) - static_cast<double>(y_f32[i]));
      q8_off += std::fabs(static_cast<double>(y_q8[i]) - static_cast<double>(y_f32[i]));
    }
    EXPECT_LT(i16_off * 50, q8_off) << plugin;
  }
}

TEST_F(CpuBackendF32, RefusesAnUnknownActivationPrecision) {
  for (const char* plugin : {"cpu", "cpu-scalar"}) {
    EXPECT_THROW(Backend(services, plugin, {{"activations", std::string("f16")}}),
                 std::runtime_error)
        << plugin;
  }
}

}  // namespace
}  // namespace lpx::core
