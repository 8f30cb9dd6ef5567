// The int16-activation matmul (reference/matmul_i16.hpp): the reference against float64 and
// against the q8 mode's error, its rounding properties, and every SIMD kernel set bit for bit
// against it (activation bytes and outputs; batch 1..15, odd rows, any row split).
#include "reference/matmul_i16.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "cpu/cpu_features.hpp"
#include "kernel_set_params.hpp"
#include "matmul_test_support.hpp"
#include "reference/dequantize.hpp"
#include "reference/matmul.hpp"
#include "reference/quantize_activations.hpp"
#include "reference/tensor_types.hpp"
#include "reference/vec_dot.hpp"

namespace lpx::kernels::reference {
namespace {

using matmul_test::same_bits;
using matmul_test::type_name;

constexpr lpx_tensor_type kI16Types[] = {LPX_TENSOR_Q8_0, LPX_TENSOR_Q4_0, LPX_TENSOR_Q4_1, LPX_TENSOR_Q5_0,
                                         LPX_TENSOR_Q5_1, LPX_TENSOR_Q4_K, LPX_TENSOR_Q5_K, LPX_TENSOR_Q6_K};

bool k_type(std::int32_t type) {
  return type == LPX_TENSOR_Q4_K || type == LPX_TENSOR_Q5_K || type == LPX_TENSOR_Q6_K;
}

float f32_at(const std::uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

std::vector<std::uint8_t> quantize(std::int32_t type, const std::vector<float>& x, std::size_t columns,
                                   std::size_t batch) {
  std::vector<std::uint8_t> out(i16_row_bytes(columns) * batch);
  quantize_activations_i16(type, x.data(), columns, batch, out.data());
  return out;
}

// The activation step d of element c of a row in `type`'s format.
float step_of(std::int32_t type, const std::vector<std::uint8_t>& row, std::size_t c) {
  if (i16_super_blocks(type)) return f32_at(row.data() + c / 256 * kI16SuperBlockBytes + kI16SuperBlockScaleOffset);
  return f32_at(row.data() + c / 32 * kI16BlockBytes);
}

TEST(ReferenceI16, WhichTypesTakeInt16Activations) {
  for (std::int32_t type : matmul_test::kAllTypes) {
    const bool expected = type == LPX_TENSOR_Q8_0 || type == LPX_TENSOR_Q4_0 || type == LPX_TENSOR_Q4_1 ||
                          type == LPX_TENSOR_Q5_0 || type == LPX_TENSOR_Q5_1 || k_type(type);
    EXPECT_EQ(i16_dot_type(type), expected) << type_name(type);
  }
}

// Each block: d = amax / 32767, the largest magnitude maps to +-32767, every value within d / 2,
// s = d * sum(q); an all-zero block is all zeros.
TEST(ReferenceI16, RoundsEachBlockTo16Bits) {
  matmul_test::Random random(5);
  const std::size_t columns = 96;
  std::vector<float> x = random.activations(1, columns);
  for (std::size_t c = 32; c < 64; ++c) x[c] = 0.0f;
  const auto bytes = quantize(LPX_TENSOR_Q8_0, x, columns, 1);
  for (std::size_t k = 0; k < columns / 32; ++k) {
    const std::uint8_t* block = bytes.data() + k * kI16BlockBytes;
    float amax = 0.0f;
    for (std::size_t e = 0; e < 32; ++e) amax = std::fmax(amax, std::fabs(x[32 * k + e]));
    const float d = f32_at(block);
    EXPECT_EQ(d, amax / 32767.0f);
    int sum = 0, largest = 0;
    for (std::size_t e = 0; e < 32; ++e) {
      std::int16_t q;
      std::memcpy(&q, block + 8 + 2 * e, 2);
      sum += q;
      largest = std::max(largest, std::abs(static_cast<int>(q)));
      EXPECT_LE(std::fabs(static_cast<double>(q) * static_cast<double>(d) - static_cast<double>(x[32 * k + e])),
                0.5001 * static_cast<double>(d))
          << k << " " << e;
    }
    EXPECT_EQ(largest, amax == 0.0f ? 0 : 32767);
    EXPECT_EQ(f32_at(block + 4), d * static_cast<float>(sum));
  }
}

// The K types' super-blocks: d = amax / 32767 of all 256 elements, every value within d / 2,
// s_j = d * the sum of q over elements 32j..32j+31, zeros after; each super-block on its own.
TEST(ReferenceI16, RoundsEachSuperBlockTo16Bits) {
  matmul_test::Random random(6);
  const std::size_t columns = 512;
  std::vector<float> x = random.activations(1, columns);
  x[300] = 40.0f;  // an outlier sets the second super-block's step alone
  const auto bytes = quantize(LPX_TENSOR_Q4_K, x, columns, 1);
  ASSERT_EQ(bytes.size(), 2 * kI16SuperBlockBytes);
  for (std::size_t k = 0; k < 2; ++k) {
    const std::uint8_t* block = bytes.data() + k * kI16SuperBlockBytes;
    float amax = 0.0f;
    for (std::size_t e = 0; e < 256; ++e) amax = std::fmax(amax, std::fabs(x[256 * k + e]));
    const float d = f32_at(block + kI16SuperBlockScaleOffset);
    EXPECT_EQ(d, amax / 32767.0f);
    for (std::size_t j = 0; j < 8; ++j) {
      int sum = 0;
      for (std::size_t e = 32 * j; e < 32 * j + 32; ++e) {
        std::int16_t q;
        std::memcpy(&q, block + 2 * e, 2);
        sum += q;
        EXPECT_LE(std::fabs(static_cast<double>(q) * static_cast<double>(d) - static_cast<double>(x[256 * k + e])),
                  0.5001 * static_cast<double>(d))
            << k << " " << e;
      }
      EXPECT_EQ(f32_at(block + kI16SuperBlockScaleOffset + 4 + 4 * j), d * static_cast<float>(sum)) << k << " " << j;
    }
    for (std::size_t b = kI16SuperBlockScaleOffset + 36; b < kI16SuperBlockBytes; ++b) EXPECT_EQ(block[b], 0) << b;
  }
  EXPECT_EQ(f32_at(bytes.data() + kI16SuperBlockBytes + kI16SuperBlockScaleOffset), 40.0f / 32767.0f);
}

// Against the float64 dot of the model's weights with the unrounded activations: within the
// rounding of the activations (|w| . d/2 per element) plus f32 accumulation, and far closer than
// the q8 mode (256 times finer steps).
TEST(ReferenceI16, IsCloseToTheExactDotAndFarCloserThanQ8) {
  for (std::int32_t type : kI16Types) {
    matmul_test::Random random(40u + static_cast<std::uint32_t>(type));
    const std::size_t columns = k_type(type) ? 768 : 576, rows = 64;
    const auto w = random.weights(type, rows, columns);
    const auto x = random.activations(1, columns);
    const auto xi = quantize(type, x, columns, 1);
    std::vector<std::uint8_t> x8(activation_row_bytes(type, columns));
    reference::quantize_activations(type, x.data(), columns, 1, x8.data());
    const std::size_t row_bytes = *row_size_bytes(type, columns);
    double i16_error = 0, q8_error = 0;
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> wf(columns);
      ASSERT_EQ(dequantize_row(type, w.data() + r * row_bytes, columns, wf.data()), DequantizeStatus::ok);
      double exact = 0, magnitude = 0, bound = 0;
      for (std::size_t c = 0; c < columns; ++c) {
        const double wc = wf[c], xc = x[c];
        exact += wc * xc;
        magnitude += std::fabs(wc * xc);
        bound += std::fabs(wc) * 0.5 * static_cast<double>(step_of(type, xi, c));
      }
      const double y = dot_i16_activations(type, w.data() + r * row_bytes, xi.data(), columns);
      EXPECT_LE(std::fabs(y - exact), bound + 1e-6 * magnitude + 1e-30) << type_name(type) << " row " << r;
      i16_error += std::fabs(y - exact);
      q8_error += std::fabs(static_cast<double>(vec_dot(type, w.data() + r * row_bytes, x8.data(), columns)) - exact);
    }
    EXPECT_LT(i16_error * 50, q8_error) << type_name(type);
  }
}

// A block so small that 32767 / amax overflows rounds to zeros (rather than to infinities cast to
// int16), in the reference and in every kernel set.
TEST(ReferenceI16, ATinyBlockRoundsToZeros) {
  std::vector<float> x(64, 0.0f);
  for (std::size_t c = 0; c < 32; ++c) x[c] = (c % 2 == 0 ? 1.0f : -1.0f) * 1e-36f * static_cast<float>(c + 1);
  for (std::size_t c = 32; c < 64; ++c) x[c] = static_cast<float>(c) - 40.0f;
  const auto bytes = quantize(LPX_TENSOR_Q8_0, x, 64, 1);
  for (std::size_t e = 0; e < 32; ++e) {
    std::int16_t q;
    std::memcpy(&q, bytes.data() + 8 + 2 * e, 2);
    EXPECT_EQ(q, 0) << e;
  }
  EXPECT_EQ(f32_at(bytes.data() + 4), 0.0f);
  for (const cpu::KernelSet* set : test::simd_kernel_sets()) {
    if (!set->runs_here()) continue;
    std::vector<std::uint8_t> simd(bytes.size(), 0x55);
    set->quantize_activations_i16(LPX_TENSOR_Q8_0, x.data(), 64, 1, simd.data());
    EXPECT_EQ(simd, bytes) << set->name;
  }
}

class SimdI16Matmul : public test::SetAndTypeTest {};

TEST_P(SimdI16Matmul, SameBytesAndBitsAsTheReference) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  matmul_test::Random random(900u + static_cast<std::uint32_t>(type));
  // The K types' rows are whole 256-element super-blocks.
  const std::vector<std::size_t> widths =
      k_type(type) ? std::vector<std::size_t>{256, 768, 5 * 256} : std::vector<std::size_t>{32, 96, 37 * 32};
  for (std::size_t columns : widths) {
    for (std::size_t rows : {std::size_t{37}, std::size_t{36}}) {
      const auto w = random.weights(type, rows, columns);
      const std::size_t row_bytes = *row_size_bytes(type, columns);
      for (std::size_t batch = 1; batch <= 15; ++batch) {
        auto x = random.activations(batch, columns);
        if (batch == 3) {  // an all-zero block (super-block for the K types)
          for (std::size_t c = 0; c < (k_type(type) ? 256 : 32); ++c) x[columns + c] = 0.0f;
        }
        const auto expected_bytes = quantize(type, x, columns, batch);
        std::vector<std::uint8_t> bytes(expected_bytes.size(), 0x55);
        k.quantize_activations_i16(type, x.data(), columns, batch, bytes.data());
        ASSERT_EQ(bytes, expected_bytes) << type_name(type) << " columns " << columns << " batch " << batch;
        std::vector<float> expected(rows * batch, -1.0f), actual(rows * batch, -2.0f);
        dot_rows_i16({type, w.data(), row_bytes, rows, columns, bytes.data(), batch, expected.data()}, 0, rows);
        std::vector<float> scratch(k.f32_scratch_rows * columns, NAN);
        const I16MatmulArgs args{type, w.data(), row_bytes, rows, columns, bytes.data(), batch, actual.data()};
        // Three ranges with odd boundaries: results never depend on the split.
        k.dot_rows_i16(args, 0, 5, scratch.data());
        k.dot_rows_i16(args, 5, 18, scratch.data());
        k.dot_rows_i16(args, 18, rows, scratch.data());
        EXPECT_TRUE(same_bits(expected, actual))
            << type_name(type) << " columns " << columns << " rows " << rows << " batch " << batch;
      }
    }
  }
}

// A prompt longer than the kernels keep in cache at once (activation rows worth more than the
// level-2 cache go through in chunks) gives the reference's bits too.
TEST_P(SimdI16Matmul, LongPromptsInChunksMatchTheReference) {
  const std::int32_t type = GetParam().type;
  const cpu::KernelSet& k = *GetParam().set;
  matmul_test::Random random(1900u + static_cast<std::uint32_t>(type));
  const std::size_t columns = 1024, rows = 7;
  const std::size_t batch = cpu::l2_cache_bytes() / i16_row_bytes(columns) + 13;
  const auto w = random.weights(type, rows, columns);
  const std::size_t row_bytes = *row_size_bytes(type, columns);
  const auto x = random.activations(batch, columns);
  const auto bytes = quantize(type, x, columns, batch);
  std::vector<float> expected(rows * batch, -1.0f), actual(rows * batch, -2.0f);
  dot_rows_i16({type, w.data(), row_bytes, rows, columns, bytes.data(), batch, expected.data()}, 0, rows);
  std::vector<float> scratch(k.f32_scratch_rows * columns, NAN);
  k.dot_rows_i16({type, w.data(), row_bytes, rows, columns, bytes.data(), batch, actual.data()}, 0, rows,
                 scratch.data());
  EXPECT_TRUE(same_bits(expected, actual)) << type_name(type) << " batch " << batch;
}

INSTANTIATE_TEST_SUITE_P(KernelSets, SimdI16Matmul, ::testing::ValuesIn(test::every_set_and_type(kI16Types)),
                         test::set_and_type_name);

}  // namespace
}  // namespace lpx::kernels::reference
