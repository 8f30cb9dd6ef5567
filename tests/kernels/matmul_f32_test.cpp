// The f32-activation matmul (the backends' `activations = "f32"` mode): the reference is the F32
// dot product of the exactly dequantized weight row with the f32 activations, in one order for
// every batch size, and within 1e-5 (relative to the terms' magnitude) of float64; the AVX2
// kernels give its bits for every weight type, odd row counts, batches 1..9 and any row split.
#include "reference/matmul_f32.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "kernel_set_params.hpp"
#include "matmul_test_support.hpp"
#include "reference/dequantize.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot.hpp"

namespace lpx::kernels::reference {
namespace {

using matmul_test::kAllTypes;
using matmul_test::same_bits;
using matmul_test::type_name;

std::size_t block_of(std::int32_t type) { return traits_of(type)->block_elements; }

// Column counts to try: leftovers (n % 32 != 0) for the float types, several blocks otherwise.
std::vector<std::size_t> column_options(std::int32_t type) {
  const std::size_t block = block_of(type);
  if (block == 1) return {8, 40, 64, 100, 576};
  return {block, 3 * block, block == 32 ? 18 * block : 6 * block};
}

std::vector<float> dequantized(std::int32_t type, const std::uint8_t* row, std::size_t columns) {
  std::vector<float> out(columns);
  EXPECT_EQ(dequantize_row(type, row, columns, out.data()), DequantizeStatus::ok);
  return out;
}

std::vector<float> reference_matmul(std::int32_t type, const std::vector<std::uint8_t>& w,
                                    std::size_t rows, std::size_t columns,
                                    const std::vector<float>& x, std::size_t batch) {
  std::vector<float> y(rows * batch, -1.0f);
  const std::size_t row_bytes = *row_size_bytes(type, columns);
  dot_rows_f32({type, w.data(), row_bytes, rows, columns, x.data(), batch, y.data()}, 0, rows);
  return y;
}

class ReferenceF32Matmul : public ::testing::TestWithParam<lpx_tensor_type> {};

// The definition: vec_dot's F32 order over the dequantized row, whatever the type.
TEST_P(ReferenceF32Matmul, IsTheF32DotOfTheDequantizedRow) {
  const std::int32_t type = GetParam();
  matmul_test::Random random(300u + static_cast<std::uint32_t>(type));
  for (std::size_t columns : column_options(type)) {
    const std::size_t rows = 5;
    const auto w = random.weights(type, rows, columns);
    const auto x = random.activations(1, columns);
    const std::size_t row_bytes = *row_size_bytes(type, columns);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto values = dequantized(type, w.data() + r * row_bytes, columns);
      const float expected = vec_dot(LPX_TENSOR_F32, values.data(), x.data(), columns);
      const float actual = dot_f32_activations(type, w.data() + r * row_bytes, x.data(), columns);
      EXPECT_TRUE(same_bits({expected}, {actual}))
          << type_name(type) << " columns " << columns << " row " << r;
    }
  }
}

TEST_P(ReferenceF32Matmul, IsWithin1e5OfFloat64) {
  const std::int32_t type = GetParam();
  matmul_test::Random random(400u + static_cast<std::uint32_t>(type));
  for (std::size_t columns : column_options(type)) {
    const std::size_t rows = 7, batch = 3;
    const auto w = random.weights(type, rows, columns);
    const auto x = random.activations(batch, columns);
    const auto y = reference_matmul(type, w, rows, columns, x, batch);
    const std::size_t row_bytes = *row_size_bytes(type, columns);
    for (std::size_t r = 0; r < rows; ++r) {
      const auto values = dequantized(type, w.data() + r * row_bytes, columns);
      for (std::size_t b = 0; b < batch; ++b) {
        double exact = 0, magnitude = 0;
        for (std::size_t c = 0; c < columns; ++c) {
          const double term =
              static_cast<double>(values[c]) * static_cast<double>(x[b * columns + c]);
          exact += term;
          magnitude += std::fabs(term);
        }
        EXPECT_NEAR(static_cast<double>(y[b * rows + r]), exact, 1e-5 * magnitude + 1e-30)
            << type_name(type) << " columns " << columns << " row " << r << " batch " << b;
      }
    }
  }
}

// Unlike the q8 mode's float types (tiled gemm order from two activation rows), every output
// has the same bits whatever the batch.
TEST_P(ReferenceF32Matmul, OutputsDoNotDependOnTheBatch) {
  const std::int32_t type = GetParam();
  const std::size_t columns = block_of(type) == 1 ? 64 : 2 * block_of(type);
  const std::size_t rows = 8, batch = 9;
  matmul_test::Random random(500u + static_cast<std::uint32_t>(type));
  const auto w = random.weights(type, rows, columns);
  const auto x = random.activations(batch, columns);
  const auto all = reference_matmul(type, w, rows, columns, x, batch);
  for (std::size_t b = 0; b < batch; ++b) {
    const std::vector<float> one_x(x.begin() + static_cast<std::ptrdiff_t>(b * columns),
                                   x.begin() + static_cast<std::ptrdiff_t>((b + 1) * columns));
    const auto one = reference_matmul(type, w, rows, columns, one_x, 1);
    const std::vector<float> from_all(all.begin() + static_cast<std::ptrdiff_t>(b * rows),
                                      all.begin() + static_cast<std::ptrdiff_t>((b + 1) * rows));
    EXPECT_TRUE(same_bits(one, from_all)) << type_name(type) << " batch row " << b;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, ReferenceF32Matmul, ::testing::ValuesIn(kAllTypes),
                         [](const auto& param_info) { return type_name(param_info.param); });

class SimdF32Matmul : public test::SetAndTypeTest {};

TEST_P(SimdF32Matmul, SameBitsAsTheReferenceForEveryShape) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  matmul_test::Random random(600u + static_cast<std::uint32_t>(type));
  for (std::size_t columns : column_options(type)) {
    for (std::size_t rows : {std::size_t{37}, std::size_t{36}}) {
      const auto w = random.weights(type, rows, columns);
      const std::size_t row_bytes = *row_size_bytes(type, columns);
      for (std::size_t batch = 1; batch <= 15; ++batch) {  // the blocked prefill path from 9 on
        const auto x = random.activations(batch, columns);
        const auto expected = reference_matmul(type, w, rows, columns, x, batch);
        std::vector<float> actual(rows * batch, -2.0f);
        std::vector<float> scratch(k.f32_scratch_rows * columns, NAN);
        const F32MatmulArgs args{type,    w.data(), row_bytes, rows,
                                 columns, x.data(), batch,     actual.data()};
        // Three ranges with odd boundaries: results never depend on the split.
        k.dot_rows_f32(args, 0, 5, scratch.data());
        k.dot_rows_f32(args, 5, 18, scratch.data());
        k.dot_rows_f32(args, 18, rows, scratch.data());
        EXPECT_TRUE(same_bits(expected, actual))
            << type_name(type) << " columns " << columns << " rows " << rows << " batch " << batch;
      }
    }
  }
}

// Weights of extreme but finite scale and activations spanning many magnitudes: the dequantized
// values and products still round as the reference rounds them.
TEST_P(SimdF32Matmul, SameBitsOnWideRangedData) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  const std::size_t columns = block_of(type) == 1 ? 96 : 4 * block_of(type);
  const std::size_t rows = 9, batch = 5;
  matmul_test::Random random(700u + static_cast<std::uint32_t>(type));
  auto w = random.weights(type, rows, columns);
  auto x = random.activations(batch, columns);
  for (std::size_t i = 0; i < x.size(); ++i) {
    x[i] *= std::ldexp(1.0f, static_cast<int>(random.below(40)) - 20);
  }
  // Random bytes in the scale fields too (f16 scales of any finite value, subnormals included).
  const TensorTypeTraits* traits = traits_of(type);
  if (traits->block_elements > 1 && type != LPX_TENSOR_Q8_K) {
    const std::size_t scale_offset = type == LPX_TENSOR_Q6_K ? 208 : 0;
    const std::size_t scale_bytes = type == LPX_TENSOR_Q4_1 || type == LPX_TENSOR_Q5_1 ||
                                            type == LPX_TENSOR_Q4_K || type == LPX_TENSOR_Q5_K
                                        ? 4
                                        : 2;
    for (std::size_t b = 0; b < w.size() / traits->block_bytes; ++b) {
      for (std::size_t i = 0; i < scale_bytes; ++i) {
        std::uint8_t& byte = w[b * traits->block_bytes + scale_offset + i];
        byte = random.byte();
        if (i % 2 == 1 && (byte & 0x7C) == 0x7C) byte &= 0xBF;  // keep the f16 finite
      }
    }
  }
  const auto expected = reference_matmul(type, w, rows, columns, x, batch);
  std::vector<float> actual(rows * batch, -2.0f);
  std::vector<float> scratch(k.f32_scratch_rows * columns);
  k.dot_rows_f32({type, w.data(), *row_size_bytes(type, columns), rows, columns, x.data(), batch,
                  actual.data()},
                 0, rows, scratch.data());
  EXPECT_TRUE(same_bits(expected, actual)) << type_name(type);
}

INSTANTIATE_TEST_SUITE_P(KernelSets, SimdF32Matmul, ::testing::ValuesIn(test::every_set_and_type(kAllTypes)),
                         test::set_and_type_name);

}  // namespace
}  // namespace lpx::kernels::reference
