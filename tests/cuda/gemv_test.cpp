// The CUDA gemv family (kernels/cuda/gemv.cu) against kernels/reference, for every weight type
// gemv supports:
//  - gemv equals the reference f32-activation matmul (matmul_f32.hpp) up to summation order,
//    within the bound below, for batches 1..8 and shapes from one row to tall matrices; its
//    result for a row does not depend on the batch size; the fallback for unaligned data,
//    unaligned activations and odd float-row lengths gives the same.
//  - dequantize_rows_f16 gives f32_to_f16 of the reference dequantization and embed_rows the
//    reference dequantization itself, bit for bit, on the fast and the fallback paths.
//  - f32_to_f16 rounds as reference::f32_to_f16, bit for bit.
// Every test skips when no CUDA GPU is usable.
//
// Tolerance of gemv: both sides compute the exact dot product of the same exactly dequantized
// weights with x in f32, in different orders. Each is within k * 2^-24 * sum|w * x| (first
// order) of the exact value, where k is its longest chain of roundings: at most columns/32 + 24
// on the GPU (gemv.cu) and columns/32 + 7, plus 2 per leftover element of a float row, for the
// reference (matmul_f32.hpp). The test allows twice their sum, plus a tiny absolute term for
// subnormal products.
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "../kernels/matmul_test_support.hpp"
#include "cuda/launch.hpp"
#include "gemv_test_support.hpp"
#include "gpu_test_support.hpp"
#include "lpx/kinds/tensor.h"
#include "reference/dequantize.hpp"
#include "reference/half_precision.hpp"
#include "reference/matmul_f32.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
using namespace gemv_test;

// One gemv problem: weights, 8 activation rows, the reference outputs and their magnitudes.
struct Problem {
  std::int32_t type = 0;
  std::size_t rows = 0, columns = 0;
  std::vector<std::uint8_t> w;
  std::vector<float> x;           // kMaxGemvBatch x columns
  std::vector<float> expected;    // kMaxGemvBatch x rows, reference
  std::vector<double> tolerance;  // per output
};

Problem make_problem(matmul_test::Random& random, std::int32_t type, std::size_t rows,
                     std::size_t columns) {
  constexpr std::size_t kBatch = kMaxGemvBatch;
  Problem p;
  p.type = type;
  p.rows = rows;
  p.columns = columns;
  p.w = random_weights(random, type, rows, columns);
  p.x = random.activations(kBatch, columns);
  p.expected.assign(kBatch * rows, 0.0f);
  reference::dot_rows_f32({type, p.w.data(), row_bytes_of(type, columns), rows, columns, p.x.data(),
                           kBatch, p.expected.data()},
                          0, rows);
  const std::vector<float> values = dequantized_rows(type, p.w, rows, columns);
  const double leftovers = block_of(type) == 1 ? static_cast<double>(columns % 32) : 0.0;
  const double k = 2.0 * static_cast<double>(columns) / 32.0 + 31.0 + 2.0 * leftovers;
  p.tolerance.resize(kBatch * rows);
  for (std::size_t b = 0; b < kBatch; ++b) {
    for (std::size_t r = 0; r < rows; ++r) {
      double magnitude = 0;
      for (std::size_t c = 0; c < columns; ++c) {
        magnitude += std::fabs(static_cast<double>(values[r * columns + c]) *
                               static_cast<double>(p.x[b * columns + c]));
      }
      p.tolerance[b * rows + r] = 2.0 * k * std::ldexp(magnitude, -24) + 1e-38;
    }
  }
  return p;
}

// Runs gemv for `batch` rows with the weights `weight_offset` bytes and the activations
// `x_offset` floats into their buffers; checks every output against the reference, and that
// nothing past batch x rows was written. Returns the outputs.
std::vector<float> run_and_check(const Problem& p, int batch, std::size_t weight_offset,
                                 std::size_t x_offset) {
  const DeviceBytes w = upload_bytes(p.w, weight_offset);
  std::vector<float> x_host(x_offset, 0.0f);
  x_host.insert(x_host.end(), p.x.begin(), p.x.end());
  const DeviceBuffer<float> x(x_host);
  const DeviceBuffer<float> y(std::vector<float>(kMaxGemvBatch * p.rows, nan_sentinel()));

  gemv(device_weight(p.type, w, p.rows, p.columns), x.get() + x_offset, y.get(), batch, nullptr);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<float> out = y.download();

  const std::size_t n = static_cast<std::size_t>(batch) * p.rows;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double error =
        std::fabs(static_cast<double>(out[i]) - static_cast<double>(p.expected[i]));
    if (!(error <= p.tolerance[i]) && bad++ < 4) {
      ADD_FAILURE() << type_name(p.type) << " rows " << p.rows << " columns " << p.columns
                    << " batch " << batch << " output [b " << i / p.rows << ", r " << i % p.rows
                    << "]: got " << out[i] << ", reference " << p.expected[i] << ", tolerance "
                    << p.tolerance[i];
    }
  }
  EXPECT_EQ(bad, 0u) << "outputs out of tolerance";
  for (std::size_t i = n; i < out.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(out[i]) != 0xFFFFFFFFu) {
      ADD_FAILURE() << "gemv wrote y[" << i << "], past batch x rows = " << n;
      break;
    }
  }
  return out;
}

class GemvTypes : public ::testing::TestWithParam<lpx_tensor_type> {};

TEST(GemvSupports, TheNineTypes) {
  for (const lpx_tensor_type type : kGemvTypes) EXPECT_TRUE(gemv_supports(type)) << type;
  for (const std::int32_t type : {0, 8, 10, 12, 13, -1}) EXPECT_FALSE(gemv_supports(type)) << type;
}

// The fast path on every shape class: one row, a few rows, square-ish, and two tall matrices
// (which use 32- and 64-thread row groups); every batch size, and the same bits for a row of x
// whatever the batch it comes in.
TEST_P(GemvTypes, MatchesTheReferenceForEveryBatch) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(1000u + static_cast<std::uint32_t>(type));
  const bool k_quant = block_of(type) == 256, float_type = block_of(type) == 1;
  const std::size_t small = 256, mid = k_quant ? 512 : 576, big = 1536;
  // 50 or 64 units per row: 64-thread row groups.
  const std::size_t tall = k_quant ? 1024 : (float_type ? 400 : 800);
  const std::size_t shapes[][2] = {{1, small},  {7, mid},      {576, big},
                                   {1536, mid}, {9000, small}, {8192, tall}};
  for (const auto& shape : shapes) {
    const Problem p = make_problem(random, type, shape[0], shape[1]);
    const std::vector<float> full = run_and_check(p, kMaxGemvBatch, 0, 0);
    for (int batch = 1; batch < kMaxGemvBatch; ++batch) {
      const std::vector<float> out = run_and_check(p, batch, 0, 0);
      const std::vector<float> head(full.begin(),
                                    full.begin() + batch * static_cast<std::ptrdiff_t>(p.rows));
      const std::vector<float> got(out.begin(),
                                   out.begin() + batch * static_cast<std::ptrdiff_t>(p.rows));
      EXPECT_TRUE(matmul_test::same_bits(head, got))
          << type_name(type) << " rows " << p.rows << " columns " << p.columns << ": batch "
          << batch << " differs from batch " << kMaxGemvBatch;
      if (HasFailure()) return;
    }
  }
}

// The per-element fallback: weights and activations off their alignment, and float rows whose
// length is not a multiple of 8 (or of 4).
TEST_P(GemvTypes, FallbackMatchesTheReference) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(2000u + static_cast<std::uint32_t>(type));
  const std::size_t block = block_of(type);
  const Problem p = make_problem(random, type, 7, block == 256 ? 512 : 576);
  for (const int batch : {1, 3, 8}) {
    run_and_check(p, batch, 2, 0);  // weights 2 bytes off
    run_and_check(p, batch, 0, 1);  // activations 4 bytes off
  }
  if (block == 1) {
    for (const std::size_t columns : {37u, 100u, 12u}) {
      const Problem odd = make_problem(random, type, 5, columns);
      for (const int batch : {1, 2, 8}) run_and_check(odd, batch, 0, 0);
    }
  }
}

// Batches above kMaxGemvBatch: whole groups of 8 rows in one launch (the blocks of a weight
// row block side by side), the rest in a second one; 16, 32 and 64 are the graph buckets. Each
// row gets the reference's products, and the same bits as that row alone (batch 1), on the
// fast path and on the per-element fallback (activations off alignment).
TEST_P(GemvTypes, LargerBatchesRunInGroupsAndEqualBatchOne) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(3000u + static_cast<std::uint32_t>(type));
  const std::size_t rows = 33, columns = block_of(type) == 256 ? 512 : 576, most = 64;
  const std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  const std::vector<float> x_host = random.activations(most, columns);
  std::vector<float> expected(most * rows);
  reference::dot_rows_f32({type, w_host.data(), row_bytes_of(type, columns), rows, columns,
                           x_host.data(), most, expected.data()},
                          0, rows);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceWeight weight = device_weight(type, w, rows, columns);
  for (const std::size_t x_offset : {0u, 1u}) {
    std::vector<float> padded(x_offset, 0.0f);
    padded.insert(padded.end(), x_host.begin(), x_host.end());
    const DeviceBuffer<float> x(padded);
    // Each row alone.
    std::vector<float> alone(most * rows);
    for (std::size_t b = 0; b < most; ++b) {
      const DeviceBuffer<float> y(rows);
      gemv(weight, x.get() + x_offset + b * columns, y.get(), 1, nullptr);
      EXPECT_CUDA_OK(cudaDeviceSynchronize());
      const std::vector<float> row = y.download();
      std::copy(row.begin(), row.end(), alone.begin() + static_cast<std::ptrdiff_t>(b * rows));
    }
    for (const int batch : {9, 16, 37, 64}) {
      SCOPED_TRACE(type_name(type) + " batch " + std::to_string(batch) +
                   (x_offset == 0 ? " fast path" : " fallback"));
      const std::size_t n = static_cast<std::size_t>(batch) * rows;
      const DeviceBuffer<float> y(std::vector<float>(n + rows, nan_sentinel()));
      gemv(weight, x.get() + x_offset, y.get(), batch, nullptr);
      EXPECT_CUDA_OK(cudaDeviceSynchronize());
      const std::vector<float> out = y.download();
      for (std::size_t i = 0; i < n; ++i) {
        // Looser than the bound above, which this test does not need: values are O(10).
        const auto want = static_cast<double>(expected[i]);
        ASSERT_NEAR(static_cast<double>(out[i]), want, 1e-3 * (1.0 + std::fabs(want)))
            << "output " << i;
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), std::bit_cast<std::uint32_t>(alone[i]))
            << "output [b " << i / rows << ", r " << i % rows << "] differs from batch 1";
      }
      for (std::size_t i = n; i < out.size(); ++i) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(out[i]), 0xFFFFFFFFu) << "wrote past the batch";
      }
    }
  }
}

// A stack of three matrices (q, k, v of a layer) in one launch: each part's rows land in its
// own buffer with its bias added, bit for bit what a gemv per part plus the bias gives, for
// every batch up to 11 (two groups of rows).
TEST_P(GemvTypes, StackedPartsEqualOneGemvPerPartPlusBias) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(4000u + static_cast<std::uint32_t>(type));
  const std::size_t columns = block_of(type) == 256 ? 512 : 576;
  const std::size_t part_rows[] = {64, 16, 24};
  const std::size_t rows = 64 + 16 + 24, batch = 11;
  const std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  const std::vector<float> x_host = random.activations(batch, columns);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceBuffer<float> x(x_host);
  const DeviceWeight stack = device_weight(type, w, rows, columns);
  std::vector<DeviceBuffer<float>> separate, stacked, biases;
  GemvOutput out;
  std::size_t first_row = 0;
  for (int p = 0; p < 3; ++p) {
    const std::size_t n = part_rows[p];
    separate.emplace_back(std::vector<float>(batch * n, nan_sentinel()));
    stacked.emplace_back(std::vector<float>(batch * n, nan_sentinel()));
    biases.emplace_back(random.activations(1, n));
    DeviceWeight part = stack;
    part.data = static_cast<const std::uint8_t*>(w.data()) + first_row * stack.row_bytes;
    part.rows = static_cast<std::int64_t>(n);
    gemv(part, x.get(), separate[p].get(), static_cast<int>(batch), nullptr);
    add_bias(separate[p].get(), biases[p].get(), static_cast<int>(batch), static_cast<int>(n),
             nullptr);
    out.parts[p] = {stacked[p].get(), static_cast<std::int64_t>(n),
                    p == 1 ? nullptr : biases[p].get()};
    first_row += n;
  }
  out.count = 3;
  gemv(stack, x.get(), out, static_cast<int>(batch), nullptr);
  // Part 1 ran without its bias in the stack: add it the same way.
  add_bias(stacked[1].get(), biases[1].get(), static_cast<int>(batch), 16, nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  for (int p = 0; p < 3; ++p) {
    EXPECT_TRUE(matmul_test::same_bits(stacked[p].download(), separate[p].download()))
        << type_name(type) << " part " << p;
  }
  // Parts that do not add up to the stack's rows: NaN everywhere, nothing else written.
  out.parts[2].rows = 23;
  gemv(stack, x.get(), out, 1, nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(std::isnan(stacked[0].download()[0]));
}

// dequantize_rows_f16 gives half(reference value) bit for bit; embed_rows the reference value.
// The fast path (aligned) and the fallback (weights and outputs off alignment) alike.
TEST_P(GemvTypes, DequantizeAndEmbedAreExact) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(4000u + static_cast<std::uint32_t>(type));
  const std::size_t rows = 9, columns = block_of(type) == 256 ? 768 : 576;
  const std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  const std::vector<float> values = dequantized_rows(type, w_host, rows, columns);

  for (const std::size_t offset : {0u, 2u}) {
    SCOPED_TRACE(type_name(type) + (offset == 0 ? " aligned" : " unaligned"));
    const DeviceBytes w = upload_bytes(w_host, offset);
    const DeviceWeight weight = device_weight(type, w, rows, columns);

    // Rows 2..6 to f16; `offset / 2` halves into the output buffer.
    const std::size_t begin = 2, count = 5, out_offset = offset / 2;
    DeviceBuffer<std::uint16_t> halves(out_offset + count * columns);
    dequantize_rows_f16(weight, static_cast<std::int64_t>(begin), static_cast<std::int64_t>(count),
                        reinterpret_cast<__half*>(halves.get() + out_offset), nullptr);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<std::uint16_t> got_halves = halves.download();
    std::size_t differing = 0;
    for (std::size_t i = 0; i < count * columns; ++i) {
      const std::uint16_t expected = reference::f32_to_f16(values[begin * columns + i]);
      if (got_halves[out_offset + i] != expected && differing++ < 4) {
        ADD_FAILURE() << "dequantize_rows_f16 element " << i << ": got 0x" << std::hex
                      << got_halves[out_offset + i] << ", expected 0x" << expected << std::dec;
      }
    }
    EXPECT_EQ(differing, 0u);

    // Embedding: repeated and out-of-order tokens; `offset / 2` floats into the output buffer.
    const std::vector<std::int32_t> tokens = {3, 0, 8, 3, 5};
    const DeviceBuffer<std::int32_t> device_tokens(tokens);
    DeviceBuffer<float> embedded(out_offset + tokens.size() * columns);
    embed_rows(weight, device_tokens.get(), static_cast<int>(tokens.size()),
               embedded.get() + out_offset, nullptr);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = embedded.download();
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const auto row = static_cast<std::size_t>(tokens[i]);
      const std::vector<float> expected(
          values.begin() + static_cast<std::ptrdiff_t>(row * columns),
          values.begin() + static_cast<std::ptrdiff_t>((row + 1) * columns));
      const std::vector<float> actual(
          got.begin() + static_cast<std::ptrdiff_t>(out_offset + i * columns),
          got.begin() + static_cast<std::ptrdiff_t>(out_offset + (i + 1) * columns));
      EXPECT_TRUE(matmul_test::same_bits(expected, actual)) << "embedding of token " << tokens[i];
    }
  }
}

// A token outside [0, rows) gives a row of NaN (the engine validates tokens before this).
TEST(EmbedRows, OutOfRangeTokensGiveNaN) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(5000u);
  const std::size_t rows = 4, columns = 64;
  const std::vector<std::uint8_t> w_host = random_weights(random, LPX_TENSOR_Q8_0, rows, columns);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceBuffer<std::int32_t> tokens(std::vector<std::int32_t>{-1, 4, 1});
  DeviceBuffer<float> out(3 * columns);
  embed_rows(device_weight(LPX_TENSOR_Q8_0, w, rows, columns), tokens.get(), 3, out.get(), nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> got = out.download();
  for (std::size_t c = 0; c < 2 * columns; ++c) EXPECT_TRUE(std::isnan(got[c])) << c;
  const std::vector<float> values = dequantized_rows(LPX_TENSOR_Q8_0, w_host, rows, columns);
  EXPECT_TRUE(matmul_test::same_bits(
      std::vector<float>(values.begin() + columns, values.begin() + 2 * columns),
      std::vector<float>(got.begin() + 2 * columns, got.end())));
}

// A queued step's token -(o + 1) is the pick the step before left at previous_picks[o]
// (lpx_forward_args.previous_outputs): its row is that token's embedding.
TEST(EmbedRows, NegativeTokensTakeThePreviousPicks) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(5001u);
  const std::size_t rows = 6, columns = 64;
  const std::vector<std::uint8_t> w_host = random_weights(random, LPX_TENSOR_Q8_0, rows, columns);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceBuffer<std::int32_t> tokens(std::vector<std::int32_t>{-2, 1, -1});
  const DeviceBuffer<std::int32_t> picks(std::vector<std::int32_t>{5, 3});
  DeviceBuffer<float> out(3 * columns);
  embed_rows(device_weight(LPX_TENSOR_Q8_0, w, rows, columns), tokens.get(), picks.get(), 3,
             out.get(), nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<float> got = out.download();
  const std::vector<float> values = dequantized_rows(LPX_TENSOR_Q8_0, w_host, rows, columns);
  const std::size_t expected_rows[] = {3, 1, 5};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto row = static_cast<std::ptrdiff_t>(expected_rows[i] * columns);
    EXPECT_TRUE(matmul_test::same_bits(
        std::vector<float>(values.begin() + row, values.begin() + row + columns),
        std::vector<float>(got.begin() + static_cast<std::ptrdiff_t>(i * columns),
                           got.begin() + static_cast<std::ptrdiff_t>((i + 1) * columns))))
        << "row " << i;
  }
}

// An unsupported type fills y with NaN rather than leaving stale values.
TEST(Gemv, UnsupportedTypeGivesNaN) {
  LPX_REQUIRE_GPU();
  const std::size_t rows = 3, columns = 32;
  const DeviceBytes w = upload_bytes(std::vector<std::uint8_t>(rows * 24, 0), 0);  // Q5_1 bytes
  const DeviceBuffer<float> x(std::vector<float>(columns, 1.0f));
  const DeviceBuffer<float> y(std::vector<float>(rows, 0.0f));
  const DeviceWeight weight{LPX_TENSOR_Q5_1, w.data(), static_cast<std::int64_t>(rows),
                            static_cast<std::int64_t>(columns), 24};
  gemv(weight, x.get(), y.get(), 1, nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  for (const float v : y.download()) EXPECT_TRUE(std::isnan(v));
}

TEST(F32ToF16, RoundsAsTheReference) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(6000u);
  // Zeros, the overflow boundary, subnormal results and their rounding, infinities, NaNs.
  std::vector<float> x = {0.0f,     -0.0f,    1.0f,   -1.0f,         65504.0f,
                          65519.0f, 65520.0f, -1e9f,  6.0e-8f,       2.98023224e-8f,
                          2.9e-8f,  1e-45f,   1e-40f, 3.0517578e-5f, 6.097555e-5f};
  for (const std::uint32_t bits :
       {0x7F800000u, 0xFF800000u, 0x7FC12345u, 0xFF812345u, 0x7F800001u}) {
    x.push_back(std::bit_cast<float>(bits));
  }
  for (int i = 0; i < 10007; ++i) {
    x.push_back(random.normal(std::ldexp(1.0f, static_cast<int>(random.below(40)) - 26)));
  }
  // Ties: f16 midpoints in the normal and subnormal ranges.
  for (std::uint16_t h = 1; h < 0x7C00; h = static_cast<std::uint16_t>(h + 977)) {
    const float lo = reference::f16_to_f32(h),
                hi = reference::f16_to_f32(static_cast<std::uint16_t>(h + 1));
    x.push_back(lo + (hi - lo) / 2.0f);
  }
  const DeviceBuffer<float> device_x(x);
  DeviceBuffer<std::uint16_t> out(x.size());
  f32_to_f16(device_x.get(), reinterpret_cast<__half*>(out.get()), x.size(), nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<std::uint16_t> got = out.download();
  for (std::size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(got[i], reference::f32_to_f16(x[i]))
        << "x = " << x[i] << " (bits 0x" << std::hex << std::bit_cast<std::uint32_t>(x[i]) << ")";
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GemvTypes, ::testing::ValuesIn(kGemvTypes),
                         [](const auto& param_info) { return type_name(param_info.param); });

}  // namespace
}  // namespace lpx::kernels::cuda
