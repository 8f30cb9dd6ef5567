// The fusions of the gemv family (launch.hpp GemvInput / GemvStore), which let a decode layer
// run in six launches, against what they replace, for every weight type:
//  - a normalised input (the norm folded into the product) equals reference::rms_norm_row then
//    the reference matmul within the bound of gemv.cu, and a row's result does not depend on
//    the batch it comes in;
//  - kAccumulate equals gemv then add_in_place, bit for bit (with and without a bias);
//  - kSwigluPairs (kGegluPairs) over an interleaved gate/up weight equals a plain gemv of that
//    weight then swiglu_pairs (geglu_pairs), bit for bit (with a normalised input too);
//    swiglu_pairs equals reference::swiglu on the de-interleaved rows (bit for bit on the whole
//    groups of 8), and geglu_pairs equals geglu on them;
//  - the output head's scale, soft cap and fused argmax equal gemv, scale_and_cap and
//    argmax_rows.
// The fast path and the per-element fallback alike. Every test skips when no GPU is usable.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

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
#include "reference/matmul_f32.hpp"
#include "reference/ops.hpp"

namespace lpx::kernels::cuda {
namespace {

using test::DeviceBuffer;
using namespace gemv_test;

constexpr float kEps = 1e-5f;

std::size_t columns_for(std::int32_t type) { return block_of(type) == 256 ? 512 : 576; }

// Norm weights as models have them: around 1, a few negative, one zero.
std::vector<float> norm_weights(matmul_test::Random& random, std::size_t n) {
  std::vector<float> g = random.activations(1, n);
  for (std::size_t i = 0; i < n; ++i) g[i] = 1.0f + 0.25f * g[i];
  g[n / 3] = -g[n / 3];
  g[n / 2] = 0.0f;
  return g;
}

// x placed `x_offset` floats into a device buffer (1 breaks the 16-byte alignment of the fast
// path); the returned pointer is the rows' start.
struct OffsetRows {
  DeviceBuffer<float> buffer;
  std::size_t offset;
  const float* get() const { return buffer.get() + offset; }
};
OffsetRows upload_rows(const std::vector<float>& rows, std::size_t offset) {
  std::vector<float> host(offset, 0.0f);
  host.insert(host.end(), rows.begin(), rows.end());
  return {DeviceBuffer<float>(host), offset};
}

class GemvFusion : public ::testing::TestWithParam<lpx_tensor_type> {};

TEST_P(GemvFusion, NormalisedInputEqualsNormThenGemv) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(7000u + static_cast<std::uint32_t>(type));
  const std::size_t rows = 300, columns = columns_for(type), batch = kMaxGemvBatch;
  const std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  std::vector<float> x = random.activations(batch, columns);
  for (std::size_t c = 0; c < columns; ++c) x[3 * columns + c] *= 1e3f;  // rows of other scales
  for (std::size_t c = 0; c < columns; ++c) x[5 * columns + c] *= 1e-3f;
  const std::vector<float> g = norm_weights(random, columns);

  std::vector<float> normed(batch * columns);
  for (std::size_t b = 0; b < batch; ++b) {
    reference::rms_norm_row(x.data() + b * columns, g.data(), normed.data() + b * columns,
                            columns, kEps);
  }
  std::vector<float> expected(batch * rows);
  reference::dot_rows_f32({type, w_host.data(), row_bytes_of(type, columns), rows, columns,
                           normed.data(), batch, expected.data()},
                          0, rows);
  // gemv.cu's bound for a normalised input (k + 3) plus the reference's, doubled.
  const std::vector<float> values = dequantized_rows(type, w_host, rows, columns);
  const double k = 2.0 * static_cast<double>(columns) / 32.0 + 36.0;
  std::vector<double> tolerance(batch * rows);
  for (std::size_t b = 0; b < batch; ++b) {
    for (std::size_t r = 0; r < rows; ++r) {
      double magnitude = 0;
      for (std::size_t c = 0; c < columns; ++c) {
        magnitude += std::fabs(static_cast<double>(values[r * columns + c]) *
                               static_cast<double>(normed[b * columns + c]));
      }
      tolerance[b * rows + r] = 2.0 * k * std::ldexp(magnitude, -24) + 1e-38;
    }
  }

  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceWeight weight = device_weight(type, w, rows, columns);
  const DeviceBuffer<float> device_g(g);
  for (const std::size_t x_offset : {0u, 1u}) {  // the fast path, then the fallback
    SCOPED_TRACE(type_name(type) + (x_offset == 0 ? " fast path" : " fallback"));
    const OffsetRows device_x = upload_rows(x, x_offset);
    std::vector<float> full;
    for (int n = kMaxGemvBatch; n >= 1; --n) {
      DeviceBuffer<float> y(std::vector<float>(batch * rows, nan_sentinel()));
      gemv(weight, GemvInput{device_x.get(), device_g.get(), kEps},
           single_gemv_output(y.get(), static_cast<std::int64_t>(rows)), n, nullptr);
      EXPECT_CUDA_OK(cudaDeviceSynchronize());
      const std::vector<float> out = y.download();
      std::size_t bad = 0;
      for (std::size_t i = 0; i < static_cast<std::size_t>(n) * rows; ++i) {
        const double error =
            std::fabs(static_cast<double>(out[i]) - static_cast<double>(expected[i]));
        if (!(error <= tolerance[i]) && bad++ < 4) {
          ADD_FAILURE() << "batch " << n << " output [b " << i / rows << ", r " << i % rows
                        << "]: got " << out[i] << ", reference " << expected[i]
                        << ", tolerance " << tolerance[i];
        }
      }
      ASSERT_EQ(bad, 0u);
      if (full.empty()) {
        full = out;
      } else {
        const auto count = static_cast<std::ptrdiff_t>(n * rows);
        EXPECT_TRUE(matmul_test::same_bits(std::vector<float>(full.begin(), full.begin() + count),
                                           std::vector<float>(out.begin(), out.begin() + count)))
            << "batch " << n << " differs from batch " << kMaxGemvBatch;
      }
    }
  }
}

TEST_P(GemvFusion, AccumulateEqualsGemvThenAdd) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(8000u + static_cast<std::uint32_t>(type));
  const std::size_t rows = 200, columns = columns_for(type), batch = 11;
  const std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  const std::vector<float> x = random.activations(batch, columns);
  const std::vector<float> residual = random.activations(batch, rows);
  const DeviceBuffer<float> bias(random.activations(1, rows));
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceWeight weight = device_weight(type, w, rows, columns);
  const auto n = static_cast<int>(batch);
  const auto width = static_cast<std::int64_t>(rows);
  for (const std::size_t x_offset : {0u, 1u}) {
    for (const bool with_bias : {false, true}) {
      SCOPED_TRACE(type_name(type) + (x_offset == 0 ? " fast path" : " fallback") +
                   (with_bias ? " with bias" : ""));
      const OffsetRows device_x = upload_rows(x, x_offset);
      const float* b = with_bias ? bias.get() : nullptr;
      DeviceBuffer<float> fused(residual);
      gemv(weight, GemvInput{device_x.get()},
           single_gemv_output(fused.get(), width, b, GemvStore::kAccumulate),
           n, nullptr);
      DeviceBuffer<float> separate(residual);
      DeviceBuffer<float> product(batch * rows);
      gemv(weight, GemvInput{device_x.get()}, single_gemv_output(product.get(), width, b), n,
           nullptr);
      add_in_place(separate.get(), product.get(), batch * rows, nullptr);
      EXPECT_CUDA_OK(cudaDeviceSynchronize());
      EXPECT_TRUE(matmul_test::same_bits(separate.download(), fused.download()));
    }
  }
}

// The lowest index of the largest value; NaN ranks below everything (argmax_rows' order).
std::int32_t host_argmax(const float* row, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i) {
    if (!std::isnan(row[i]) && (std::isnan(row[best]) || row[i] > row[best])) best = i;
  }
  return static_cast<std::int32_t>(best);
}

// The output head (launch.hpp GemvOutput::scale, softcap, argmax_keys): the logits equal a
// plain gemv then scale_and_cap, bit for bit; argmax_finish gives each row's argmax of those
// logits (the lowest index among equals: a cap of 0.5 saturates many of them to the same
// value) and leaves the keys zero. Tall enough for several row groups per block, batches
// within one group of 8, across groups and the largest graph bucket, with the normalised
// input the head reads, on the fast path and the fallback (activations off alignment); an
// F32 head gets NaN rows, which must rank lowest.
TEST_P(GemvFusion, HeadScalesCapsAndPicksTheArgmax) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(9000u + static_cast<std::uint32_t>(type));
  const std::size_t rows = 8200, columns = columns_for(type), most = 64;
  std::vector<std::uint8_t> w_host = random_weights(random, type, rows, columns);
  if (type == LPX_TENSOR_F32) {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    for (const std::size_t r : {std::size_t{0}, std::size_t{4097}}) {
      std::memcpy(w_host.data() + r * columns * sizeof(float), &nan, sizeof nan);
    }
  }
  const std::vector<float> x = random.activations(most, columns);
  const std::vector<float> g = norm_weights(random, columns);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceWeight weight = device_weight(type, w, rows, columns);
  const DeviceBuffer<float> device_g(g);
  const auto width = static_cast<std::int64_t>(rows);
  const struct {
    float scale, softcap;
  } heads[] = {{1.0f, 0.0f}, {0.125f, 0.0f}, {1.0f, 30.0f}, {2.0f, 0.5f}};
  DeviceBuffer<unsigned long long> keys(std::vector<unsigned long long>(most, 0));
  for (const std::size_t x_offset : {0u, 1u}) {
    const OffsetRows device_x = upload_rows(x, x_offset);
    const GemvInput input{device_x.get(), device_g.get(), kEps};
    for (const auto& head : heads) {
      for (const int batch : {1, 5, 8, 13, 64}) {
        SCOPED_TRACE(type_name(type) + (x_offset == 0 ? " fast path" : " fallback") + " scale " +
                     std::to_string(head.scale) + " softcap " + std::to_string(head.softcap) +
                     " batch " + std::to_string(batch));
        const std::size_t n = static_cast<std::size_t>(batch) * rows;
        DeviceBuffer<float> separate(n);
        gemv(weight, input, single_gemv_output(separate.get(), width), batch, nullptr);
        scale_and_cap(separate.get(), n, head.scale, head.softcap, nullptr);
        DeviceBuffer<std::int32_t> picked_separately(static_cast<std::size_t>(batch));
        argmax_rows(separate.get(), batch, static_cast<int>(rows), picked_separately.get(), nullptr);

        DeviceBuffer<float> fused(n);
        GemvOutput out = single_gemv_output(fused.get(), width);
        out.scale = head.scale;
        out.softcap = head.softcap;
        out.argmax_keys = keys.get();
        gemv(weight, input, out, batch, nullptr);
        DeviceBuffer<std::int32_t> picked(
            std::vector<std::int32_t>(static_cast<std::size_t>(batch), -7));
        argmax_finish(keys.get(), batch, picked.get(), nullptr);
        EXPECT_CUDA_OK(cudaDeviceSynchronize());

        const std::vector<float> logits = fused.download();
        ASSERT_TRUE(matmul_test::same_bits(separate.download(), logits));
        const std::vector<std::int32_t> got = picked.download();
        EXPECT_EQ(got, picked_separately.download());
        for (std::size_t b = 0; b < static_cast<std::size_t>(batch); ++b) {
          EXPECT_EQ(got[b], host_argmax(logits.data() + b * rows, rows)) << "row " << b;
        }
        for (const unsigned long long key : keys.download()) ASSERT_EQ(key, 0u);
      }
    }
  }
}

// A fused argmax takes one plain (written) part: asked of a product that is added to a buffer,
// it fills the output with NaN (the mismatch shows) and raises no key.
TEST(GemvFusionChecks, ArgmaxOfAnAccumulatedOutputGivesNaN) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(9100u);
  const std::size_t rows = 64, columns = 576;
  const std::vector<std::uint8_t> w_host = random_weights(random, LPX_TENSOR_Q8_0, rows, columns);
  const DeviceBytes w = upload_bytes(w_host, 0);
  const DeviceWeight weight = device_weight(LPX_TENSOR_Q8_0, w, rows, columns);
  const DeviceBuffer<float> x(random.activations(1, columns));
  DeviceBuffer<unsigned long long> keys(std::vector<unsigned long long>(1, 0));
  DeviceBuffer<float> y(std::vector<float>(rows, 0.0f));
  GemvOutput out = single_gemv_output(y.get(), static_cast<std::int64_t>(rows), nullptr,
                                      GemvStore::kAccumulate);
  out.argmax_keys = keys.get();
  gemv(weight, x.get(), out, 1, nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  for (const float v : y.download()) ASSERT_TRUE(std::isnan(v));
  EXPECT_EQ(keys.download(), std::vector<unsigned long long>(1, 0));
}

// Gate and up interleaved row by row into one weight of 2n rows.
std::vector<std::uint8_t> interleave(const std::vector<std::uint8_t>& gate,
                                     const std::vector<std::uint8_t>& up, std::size_t n,
                                     std::size_t row_bytes) {
  std::vector<std::uint8_t> out;
  for (std::size_t r = 0; r < n; ++r) {
    out.insert(out.end(), gate.begin() + static_cast<std::ptrdiff_t>(r * row_bytes),
               gate.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_bytes));
    out.insert(out.end(), up.begin() + static_cast<std::ptrdiff_t>(r * row_bytes),
               up.begin() + static_cast<std::ptrdiff_t>((r + 1) * row_bytes));
  }
  return out;
}

TEST_P(GemvFusion, GatedPairsEqualGemvThenTheirPairKernel) {
  LPX_REQUIRE_GPU();
  const std::int32_t type = GetParam();
  matmul_test::Random random(9000u + static_cast<std::uint32_t>(type));
  const std::size_t columns = columns_for(type), batch = 11;
  const std::size_t row_bytes = row_bytes_of(type, columns);
  for (const GemvStore store : {GemvStore::kSwigluPairs, GemvStore::kGegluPairs}) {
    const bool gelu = store == GemvStore::kGegluPairs;
    for (const std::size_t n : {96u, 100u}) {  // 100: a tail of 4 outside the groups of 8
      const std::vector<std::uint8_t> stacked =
          interleave(random_weights(random, type, n, columns),
                     random_weights(random, type, n, columns), n, row_bytes);
      const std::vector<float> x = random.activations(batch, columns);
      const DeviceBuffer<float> g(norm_weights(random, columns));
      const DeviceBytes w = upload_bytes(stacked, 0);
      const DeviceWeight weight = device_weight(type, w, 2 * n, columns);
      for (const std::size_t x_offset : {0u, 1u}) {
        for (const bool normalised : {false, true}) {
          SCOPED_TRACE(type_name(type) + (gelu ? " geglu" : " swiglu") + " n " + std::to_string(n) +
                       (x_offset == 0 ? " fast path" : " fallback") +
                       (normalised ? " normalised" : ""));
          const OffsetRows device_x = upload_rows(x, x_offset);
          const GemvInput in{device_x.get(), normalised ? g.get() : nullptr, kEps};
          DeviceBuffer<float> fused(std::vector<float>(batch * n + 1, nan_sentinel()));
          gemv(weight, in,
               single_gemv_output(fused.get(), static_cast<std::int64_t>(n), nullptr, store),
               static_cast<int>(batch), nullptr);
          DeviceBuffer<float> products(batch * 2 * n);
          gemv(weight, in, single_gemv_output(products.get(), static_cast<std::int64_t>(2 * n)),
               static_cast<int>(batch), nullptr);
          DeviceBuffer<float> separate(std::vector<float>(batch * n + 1, nan_sentinel()));
          (gelu ? geglu_pairs : swiglu_pairs)(products.get(), separate.get(),
                                              static_cast<int>(batch), static_cast<int>(n), nullptr);
          EXPECT_CUDA_OK(cudaDeviceSynchronize());
          const std::vector<float> got = fused.download();
          EXPECT_TRUE(matmul_test::same_bits(separate.download(), got));
          EXPECT_TRUE(std::isnan(got.back())) << "wrote past batch x n";
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllTypes, GemvFusion, ::testing::ValuesIn(kGemvTypes),
                         [](const ::testing::TestParamInfo<lpx_tensor_type>& param) {
                           return type_name(param.param);
                         });

// Outputs that do not describe the weight: NaN, so the mistake shows.
TEST(GemvFusionChecks, MismatchedPairOutputsGiveNaN) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(9500u);
  const std::size_t columns = 64;
  const DeviceBytes w = upload_bytes(random_weights(random, LPX_TENSOR_Q8_0, 9, columns), 0);
  const DeviceBuffer<float> x(random.activations(1, columns));
  const DeviceBuffer<float> bias(std::vector<float>(8, 0.0f));
  DeviceBuffer<float> y(std::vector<float>(8, 0.0f));
  // An odd number of rows; then a pair part of the wrong width; then a bias.
  const struct {
    std::size_t rows;
    std::int64_t out_rows;
    const float* bias;
  } cases[] = {{9, 4, nullptr}, {8, 8, nullptr}, {8, 4, bias.get()}};
  for (const auto& c : cases) {
    y.upload(std::vector<float>(8, 0.0f));
    gemv(device_weight(LPX_TENSOR_Q8_0, w, c.rows, columns), GemvInput{x.get()},
         single_gemv_output(y.get(), c.out_rows, c.bias, GemvStore::kSwigluPairs), 1, nullptr);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(std::isnan(y.download()[0])) << c.rows << " rows, " << c.out_rows << " outputs";
  }
}

// geglu_pairs against geglu of each row's de-interleaved gate and up: bit for bit.
TEST(GegluPairs, EqualsGegluOfTheDeinterleavedRows) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(9700u);
  const std::size_t rows = 3, n = 1000;
  std::vector<float> pairs = random.activations(rows, 2 * n);
  for (float& v : pairs) v *= 4.0f;
  std::vector<float> gate(rows * n), up(rows * n);
  for (std::size_t i = 0; i < rows * n; ++i) {
    gate[i] = pairs[2 * i];
    up[i] = pairs[2 * i + 1];
  }
  const DeviceBuffer<float> device_pairs(pairs), device_gate(gate), device_up(up);
  DeviceBuffer<float> paired(rows * n), separate(rows * n);
  geglu_pairs(device_pairs.get(), paired.get(), static_cast<int>(rows), static_cast<int>(n), nullptr);
  geglu(device_gate.get(), device_up.get(), separate.get(), rows * n, nullptr);
  EXPECT_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(matmul_test::same_bits(separate.download(), paired.download()));
}

// swiglu_pairs against reference::swiglu of each row's de-interleaved gate and up: exact on
// the whole groups of 8, within 2 ulp on the tail (the reference's expf is glibc's).
TEST(SwigluPairs, MatchesTheReferenceRowByRow) {
  LPX_REQUIRE_GPU();
  matmul_test::Random random(9600u);
  for (const std::size_t n : {64u, 1000u, 13u}) {
    const std::size_t rows = 3;
    std::vector<float> pairs = random.activations(rows, 2 * n);
    for (float& v : pairs) v *= 4.0f;
    std::vector<float> expected(rows * n);
    for (std::size_t r = 0; r < rows; ++r) {
      std::vector<float> gate(n), up(n);
      for (std::size_t j = 0; j < n; ++j) {
        gate[j] = pairs[r * 2 * n + 2 * j];
        up[j] = pairs[r * 2 * n + 2 * j + 1];
      }
      reference::swiglu(gate.data(), up.data(), expected.data() + r * n, n);
    }
    const DeviceBuffer<float> device_pairs(pairs);
    DeviceBuffer<float> out(rows * n);
    swiglu_pairs(device_pairs.get(), out.get(), static_cast<int>(rows), static_cast<int>(n),
                 nullptr);
    EXPECT_CUDA_OK(cudaDeviceSynchronize());
    const std::vector<float> got = out.download();
    for (std::size_t i = 0; i < got.size(); ++i) {
      const std::size_t j = i % n;
      if (j < n - n % 8) {
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got[i]), std::bit_cast<std::uint32_t>(expected[i]))
            << "n " << n << " element " << i;
      } else {
        ASSERT_NEAR(got[i], expected[i], 2.0f * std::ldexp(std::fabs(expected[i]), -23))
            << "n " << n << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace lpx::kernels::cuda
