// The matmul kernels: the reference against a float64 dot product of its own rounded operands
// (so only the summation order is left to differ), the choice of summation order, and the AVX2
// kernels bit for bit against the reference on every weight type, odd row counts, batches 1..9
// and row ranges of any split.
#include "reference/matmul.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "kernel_set_params.hpp"
#include "matmul_test_support.hpp"
#include "reference/dequantize.hpp"
#include "reference/half_precision.hpp"
#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::reference {
namespace {

using matmul_test::kAllTypes;
using matmul_test::same_bits;
using matmul_test::type_name;

std::size_t block_of(std::int32_t type) { return traits_of(type)->block_elements; }

class ReferenceMatmul : public ::testing::TestWithParam<lpx_tensor_type> {};

TEST_P(ReferenceMatmul, MatchesAFloat64DotOfItsRoundedOperands) {
  const std::int32_t type = GetParam();
  const std::size_t columns = block_of(type) == 1 ? 72 : 2 * block_of(type);
  const std::size_t rows = 5, batch = 3;
  matmul_test::Random random(7u + static_cast<std::uint32_t>(type));
  const auto w = random.weights(type, rows, columns);
  const auto x = random.activations(batch, columns);
  std::vector<float> y(rows * batch);
  std::vector<std::uint8_t> scratch;
  matmul(type, w.data(), rows, columns, x.data(), batch, y.data(), scratch);

  const std::size_t row_bytes = *row_size_bytes(type, columns);
  const std::size_t activation_bytes = activation_row_bytes(type, columns);
  std::vector<float> wf(columns);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t r = 0; r < rows; ++r) {
      ASSERT_EQ(dequantize_row(type, w.data() + r * row_bytes, columns, wf.data()),
                DequantizeStatus::ok);
      double magnitude = 0;
      const double exact =
          matmul_test::exact_dot(type, w.data() + r * row_bytes, wf.data(),
                                 scratch.data() + b * activation_bytes, columns, magnitude);
      EXPECT_NEAR(static_cast<double>(y[b * rows + r]), exact, 1e-5 * magnitude + 1e-30)
          << type_name(type) << " row " << r << " batch " << b;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReferenceMatmul, ::testing::ValuesIn(kAllTypes),
                         [](const auto& param_info) { return type_name(param_info.param); });

TEST(ReferenceMatmulOrder, TiledGemmOrderOnlyForFloatTypesWithTwoPlusRows) {
  EXPECT_TRUE(uses_gemm_order(LPX_TENSOR_F16, 8, 64, 2));
  EXPECT_TRUE(uses_gemm_order(LPX_TENSOR_F32, 4, 8, 9));
  EXPECT_TRUE(uses_gemm_order(LPX_TENSOR_BF16, 12, 16, 3));
  EXPECT_FALSE(uses_gemm_order(LPX_TENSOR_F16, 8, 64, 1));   // decode: vec_dot
  EXPECT_FALSE(uses_gemm_order(LPX_TENSOR_F16, 6, 64, 2));   // rows % 4 != 0
  EXPECT_FALSE(uses_gemm_order(LPX_TENSOR_F16, 8, 60, 2));   // columns % 8 != 0
  EXPECT_FALSE(uses_gemm_order(LPX_TENSOR_Q8_0, 8, 64, 2));  // block types: always vec_dot
  EXPECT_FALSE(uses_gemm_order(LPX_TENSOR_Q4_1, 8, 64, 2));
}

// A matmul with vec_dot order and one with gemm order give close but, in general, different
// bits: the order is part of the definition.
TEST(ReferenceMatmulOrder, BatchSizeSelectsTheOrderOfF16Sums) {
  const std::size_t rows = 8, columns = 256;
  matmul_test::Random random(3);
  const auto w = random.weights(LPX_TENSOR_F16, rows, columns);
  const auto x = random.activations(2, columns);
  std::vector<float> y1(rows), y2(2 * rows);
  std::vector<std::uint8_t> scratch;
  matmul(LPX_TENSOR_F16, w.data(), rows, columns, x.data(), 1, y1.data(), scratch);
  matmul(LPX_TENSOR_F16, w.data(), rows, columns, x.data(), 2, y2.data(), scratch);
  int differing = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    EXPECT_NEAR(y1[r], y2[r], 1e-5f * (std::fabs(y1[r]) + 1.0f));
    differing += y1[r] != y2[r];
  }
  EXPECT_GT(differing, 0);
}

class SimdMatmul : public test::SetAndTypeTest {};

TEST_P(SimdMatmul, SameBitsAsTheReferenceForEveryShape) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  const std::size_t block = block_of(type);
  // 37 blocks of the 32-element types cross the batched kernels' 16-block scale chunks twice.
  const std::vector<std::size_t> column_options =
      block == 1    ? std::vector<std::size_t>{40, 64, 100}
      : block == 32 ? std::vector<std::size_t>{block, 3 * block, 37 * block}
                    : std::vector<std::size_t>{block, 3 * block};
  matmul_test::Random random(100u + static_cast<std::uint32_t>(type));
  for (std::size_t columns : column_options) {
    for (std::size_t rows : {std::size_t{37}, std::size_t{36}}) {
      const auto w = random.weights(type, rows, columns);
      const std::size_t row_bytes = *row_size_bytes(type, columns);
      for (std::size_t batch = 1; batch <= 9; ++batch) {
        const auto x = random.activations(batch, columns);
        std::vector<std::uint8_t> activations(activation_row_bytes(type, columns) * batch);
        quantize_activations(type, x.data(), columns, batch, activations.data());
        std::vector<float> expected(rows * batch, -1.0f), actual(rows * batch, -2.0f);
        dot_rows(
            {type, w.data(), row_bytes, rows, columns, activations.data(), batch, expected.data()},
            0, rows);
        const MatmulArgs args{type,    w.data(),           row_bytes, rows,
                              columns, activations.data(), batch,     actual.data()};
        // Three ranges with odd boundaries: results never depend on the split.
        k.dot_rows(args, 0, 5);
        k.dot_rows(args, 5, 18);
        k.dot_rows(args, 18, rows);
        EXPECT_TRUE(same_bits(expected, actual))
            << type_name(type) << " columns " << columns << " rows " << rows << " batch " << batch;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KernelSets, SimdMatmul, ::testing::ValuesIn(test::every_set_and_type(kAllTypes)),
                         test::set_and_type_name);

}  // namespace
}  // namespace lpx::kernels::reference
