// The cuda plugin's per-op entries (the quant-backend ABI a host without device models calls:
// matmul, rms_norm, rope, swiglu, geglu, attention, dequantize_row; kernels/cuda/backend/host_ops),
// loaded as the host loads it, against cpu-scalar with f32 activations: the same arithmetic up
// to summation order and the documented roundings (launch.hpp). Attention runs over 600
// positions, so its chunks are merged. Skips where no GPU is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cuda/gpu_test_support.hpp"
#include "kernels/cpu_backend_test_support.hpp"
#include "kernels/matmul_test_support.hpp"
#include "kernels/ops_test_support.hpp"

namespace lpx::core {
namespace {

using cpu_backend_test::Backend;
using cpu_backend_test::view;

const std::map<std::string, OptionValue> kF32 = {{"activations", std::string("f32")}};

// |got - expected| <= relative * |expected| + absolute, element by element.
void expect_near(const std::vector<float>& expected, const std::vector<float>& got,
                 double relative, double absolute, const char* what) {
  ASSERT_EQ(expected.size(), got.size()) << what;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = expected[i], g = got[i];
    if (!(std::fabs(g - e) <= relative * std::fabs(e) + absolute) && bad++ < 4) {
      ADD_FAILURE() << what << " element " << i << ": got " << g << ", cpu-scalar " << e;
    }
  }
  EXPECT_EQ(bad, 0u) << what;
}

class CudaBackendOps : public cpu_backend_test::BackendTest {
 protected:
  void SetUp() override { LPX_REQUIRE_GPU(); }
};

TEST_F(CudaBackendOps, EveryEntryMatchesCpuScalar) {
  namespace ops_test = kernels::ops_test;
  Backend scalar(services, "cpu-scalar", kF32);
  Backend cuda(services, "cuda");
  const std::uint32_t rows = 3, heads = 8, kv_heads = 2, head_dim = 64, context = 600;
  ops_test::Random random(31);

  const std::size_t n = std::size_t{heads} * head_dim;
  const auto x = random.normal(rows * n, 2.0f);
  const auto weight = random.normal(n, 1.0f);
  std::vector<float> norm_scalar(x.size()), norm_cuda(x.size());
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.rms_norm(i, x.data(), weight.data(), norm_scalar.data(), rows, n, 1e-5f);
  });
  cuda.ok([&](const auto& api, lpx_instance* i) {
    return api.rms_norm(i, x.data(), weight.data(), norm_cuda.data(), rows, n, 1e-5f);
  });
  expect_near(norm_scalar, norm_cuda, 5e-7, 1e-30, "rms_norm");  // 2 ulp

  const std::vector<std::int32_t> positions = {5, 300, 599};
  for (std::int32_t mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    const lpx_rope_params params{sizeof(lpx_rope_params), mode, head_dim, 10000.0f, 1.0f, nullptr, 1.0f};
    auto rot_scalar = x, rot_cuda = x;
    scalar.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_scalar.data(), rows, heads, head_dim, positions.data(), &params);
    });
    cuda.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_cuda.data(), rows, heads, head_dim, positions.data(), &params);
    });
    // cos and sin may be one ulp apart (launch.hpp): a few ulp of the row's magnitude.
    expect_near(rot_scalar, rot_cuda, 1e-6, 4e-6, mode == LPX_ROPE_NORMAL ? "rope" : "rope neox");
  }
  {  // Phi-3's LongRoPE: frequency factors and an attention factor
    std::vector<float> factors(head_dim / 2);
    for (std::size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 0.37f * static_cast<float>(i);
    const lpx_rope_params params{sizeof(lpx_rope_params), LPX_ROPE_NEOX, head_dim, 10000.0f, 1.0f,
                                 factors.data(), 1.1902380714238083f};
    auto rot_scalar = x, rot_cuda = x;
    scalar.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_scalar.data(), rows, heads, head_dim, positions.data(), &params);
    });
    cuda.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_cuda.data(), rows, heads, head_dim, positions.data(), &params);
    });
    expect_near(rot_scalar, rot_cuda, 1e-6, 6e-6, "rope with factors and attn_factor");
  }

  const auto up = random.normal(x.size(), 1.0f);
  std::vector<float> act_scalar(x.size()), act_cuda(x.size());
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.swiglu(i, x.data(), up.data(), act_scalar.data(), x.size());
  });
  cuda.ok([&](const auto& api, lpx_instance* i) {
    return api.swiglu(i, x.data(), up.data(), act_cuda.data(), x.size());
  });
  expect_near(act_scalar, act_cuda, 0.0, 0.0, "swiglu");  // whole groups of 8: exact
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.geglu(i, x.data(), up.data(), act_scalar.data(), x.size());
  });
  cuda.ok([&](const auto& api, lpx_instance* i) {
    return api.geglu(i, x.data(), up.data(), act_cuda.data(), x.size());
  });
  // tanh correctly rounded against glibc's tanhf (up to 2 ulp apart): 1 + tanh cancels for
  // negative gates, so the difference is absolute, ~2^-24 * |0.5 gate up| (4e-8 here).
  expect_near(act_scalar, act_cuda, 1e-6, 1e-6, "geglu");

  // Over 600 positions: three chunks of 256, merged by the last to finish.
  ops_test::PagedCache cache(random, context, kv_heads, head_dim, 16);
  const auto q = random.normal(rows * n, 1.0f);
  std::vector<float> att_scalar(q.size()), att_cuda(q.size(), NAN);
  const auto args_scalar = ops_test::attention_args(cache, q, att_scalar, positions, heads);
  const auto args_cuda = ops_test::attention_args(cache, q, att_cuda, positions, heads);
  scalar.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &args_scalar); });
  for (int call = 0; call < 2; ++call) {  // the second on the counters the first left
    std::fill(att_cuda.begin(), att_cuda.end(), NAN);
    cuda.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &args_cuda); });
    // The reference rounds the softmax weights to f16 (attention.cu): ~2^-11 of |v| ~ 1.
    expect_near(att_scalar, att_cuda, 2e-3, 2e-3, "attention");
  }
  // Windows that cut inside the first chunk, across chunks and inside the last one (rows at 5,
  // 300 and 599 attend from 0, 201 and 500 with 100 positions; 0, 1 and 300 with 300), with
  // and without Gemma 2's soft cap.
  for (const auto& [window, softcap] : {std::pair{100u, 0.0f}, std::pair{300u, 0.0f},
                                        std::pair{100u, 2.0f}, std::pair{0u, 2.0f}}) {
    auto windowed_scalar = args_scalar, windowed_cuda = args_cuda;
    windowed_scalar.window = windowed_cuda.window = window;
    windowed_scalar.softcap = windowed_cuda.softcap = softcap;
    scalar.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &windowed_scalar); });
    std::fill(att_cuda.begin(), att_cuda.end(), NAN);
    cuda.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &windowed_cuda); });
    expect_near(att_scalar, att_cuda, 2e-3, 2e-3,
                ("attention, window " + std::to_string(window) + ", soft cap " +
                 std::to_string(softcap)).c_str());
  }

  kernels::matmul_test::Random weights(6);
  const auto data = weights.weights(LPX_TENSOR_Q4_K, 96, 512);
  const lpx_tensor_view w = view(LPX_TENSOR_Q4_K, 96, 512, data);
  std::vector<float> row_scalar(512), row_cuda(512);
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.dequantize_row(i, &w, 95, row_scalar.data());
  });
  cuda.ok([&](const auto& api, lpx_instance* i) {
    return api.dequantize_row(i, &w, 95, row_cuda.data());
  });
  EXPECT_TRUE(kernels::matmul_test::same_bits(row_scalar, row_cuda)) << "dequantize_row";
  for (const std::size_t batch : {1u, 5u, 70u}) {  // GEMV, and cuBLAS above 64 rows
    const auto xm = weights.activations(batch, 512);
    expect_near(scalar.matmul(w, xm, batch), cuda.matmul(w, xm, batch), 1e-4, 1e-4, "matmul");
  }
}

}  // namespace
}  // namespace lpx::core
