// The `cpu` backend plugin, loaded as the host loads it, against `cpu-scalar`: every kernel of
// the backend ABI gives the same bits on both, for every weight type, batch 1..9 and any thread
// count; reserve() then keeps kernel calls within its limits; bad arguments become statuses.
#include <gtest/gtest.h>

#include <iterator>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cpu/kernel_set.hpp"
#include "cpu_backend_test_support.hpp"
#include "matmul_test_support.hpp"
#include "ops_test_support.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::core {
namespace {

using cpu_backend_test::Backend;
using cpu_backend_test::view;
using kernels::matmul_test::kAllTypes;
using kernels::matmul_test::same_bits;
using kernels::matmul_test::type_name;

class CpuBackend : public cpu_backend_test::BackendTest {};

TEST_F(CpuBackend, MatmulGivesTheSameBitsAsCpuScalarForEveryType) {
  // The default (i16) here; every mode on every kernel set below.
  Backend scalar(services, "cpu-scalar");
  Backend cpu(services, "cpu", {{"threads", std::int64_t{3}}});
  kernels::matmul_test::Random random(21);
  for (std::int32_t type : kAllTypes) {
    EXPECT_EQ(cpu.api().supports_type(cpu.raw(), type), 1);
    const std::size_t block = kernels::reference::traits_of(type)->block_elements;
    const std::size_t columns = block == 1 ? 136 : 2 * block;
    for (std::size_t rows : {std::size_t{67}, std::size_t{64}}) {
      const auto data = random.weights(type, rows, columns);
      const lpx_tensor_view w = view(type, rows, columns, data);
      for (std::size_t batch : {1u, 2u, 3u, 5u, 9u}) {
        const auto x = random.activations(batch, columns);
        EXPECT_TRUE(same_bits(scalar.matmul(w, x, batch), cpu.matmul(w, x, batch)))
            << type_name(type) << " rows " << rows << " batch " << batch;
      }
    }
  }
}

// The `kernels` option forces a kernel set: each one this CPU runs gives cpu-scalar's bits in
// every activation mode; one it cannot run, or a name no set has, is refused with the reason.
TEST_F(CpuBackend, EveryKernelSetItCanForceGivesTheSameBitsOrIsRefused) {
  const char* const modes[] = {"q8", "f32", "i16"};
  std::vector<std::unique_ptr<Backend>> scalar;
  for (const char* mode : modes) {
    scalar.push_back(std::make_unique<Backend>(services, "cpu-scalar",
                                               std::map<std::string, OptionValue>{{"activations", std::string(mode)}}));
  }
  kernels::matmul_test::Random random(22);
  int ran = 0;
  for (const kernels::cpu::KernelSet* set : kernels::cpu::kernel_sets()) {
    const std::string name = set->name;
    if (!set->runs_here()) {
      try {
        Backend refused(services, "cpu", {{"kernels", name}});
        ADD_FAILURE() << name << " kernels were accepted on a CPU that cannot run them";
      } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("this CPU cannot run the " + name + " kernels"), std::string::npos)
            << e.what();
      }
      continue;
    }
    ++ran;
    for (std::size_t m = 0; m < std::size(modes); ++m) {
      Backend cpu(services, "cpu",
                  {{"kernels", name}, {"threads", std::int64_t{2}}, {"activations", std::string(modes[m])}});
      for (std::int32_t type : kAllTypes) {
        const std::size_t block = kernels::reference::traits_of(type)->block_elements;
        const std::size_t rows = 37, columns = block == 1 ? 136 : 2 * block;
        const auto data = random.weights(type, rows, columns);
        const lpx_tensor_view w = view(type, rows, columns, data);
        for (std::size_t batch : {1u, 4u, 9u}) {
          const auto x = random.activations(batch, columns);
          EXPECT_TRUE(same_bits(scalar[m]->matmul(w, x, batch), cpu.matmul(w, x, batch)))
              << name << " " << modes[m] << " " << type_name(type) << " batch " << batch;
        }
      }
    }
  }
  EXPECT_GE(ran, 1) << "the portable set runs everywhere";
  // i16 mode runs the types without an int16 dot in f32 mode: the same bits as f32 for them.
  for (std::int32_t type : {LPX_TENSOR_F16, LPX_TENSOR_BF16, LPX_TENSOR_Q8_K}) {
    const std::size_t block = kernels::reference::traits_of(type)->block_elements;
    const std::size_t rows = 9, columns = block == 1 ? 64 : block;
    const auto data = random.weights(type, rows, columns);
    const auto x = random.activations(3, columns);
    EXPECT_TRUE(same_bits(scalar[1]->matmul(view(type, rows, columns, data), x, 3),
                          scalar[2]->matmul(view(type, rows, columns, data), x, 3)))
        << type_name(type);
  }
  try {
    Backend unknown(services, "cpu", {{"kernels", std::string("neon")}});
    ADD_FAILURE() << "an unknown kernel set was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no kernel set 'neon'"), std::string::npos) << e.what();
  }
}

TEST_F(CpuBackend, ResultsDoNotDependOnTheThreadCount) {
  kernels::matmul_test::Random random(8);
  const std::size_t rows = 301, columns = 576;
  const auto data = random.weights(LPX_TENSOR_Q4_1, rows, columns);
  const lpx_tensor_view w = view(LPX_TENSOR_Q4_1, rows, columns, data);
  const auto x = random.activations(4, columns);
  for (const char* mode : {"q8", "f32", "i16"}) {
    std::vector<float> first;
    for (std::int64_t threads : {1, 2, 4}) {
      Backend cpu(services, "cpu", {{"threads", threads}, {"activations", std::string(mode)}});
      for (std::size_t batch : {1u, 4u}) {
        const auto y = cpu.matmul(w, x, batch);
        if (threads == 1 && batch == 4) first = y;
        if (batch == 4) {
          EXPECT_TRUE(same_bits(first, y)) << mode << " threads " << threads;
        }
      }
    }
  }
}

TEST_F(CpuBackend, ReserveThenEveryKernelMatchesCpuScalar) {
  namespace ops_test = kernels::ops_test;
  Backend scalar(services, "cpu-scalar");
  Backend cpu(services, "cpu", {{"threads", std::int64_t{2}}});
  const std::uint32_t rows = 3, heads = 4, kv_heads = 2, head_dim = 32, context = 40;
  lpx_backend_limits limits{sizeof(lpx_backend_limits), rows, 576, context, heads, head_dim};
  for (const Backend* b : {&scalar, &cpu}) {
    b->ok([&](const auto& api, lpx_instance* i) { return api.reserve(i, &limits); });
  }
  ops_test::Random random(4);

  const std::size_t n = std::size_t{heads} * head_dim;
  const auto x = random.normal(rows * n, 2.0f);
  const auto weight = random.normal(n, 1.0f);
  std::vector<float> norm_scalar(x.size()), norm_cpu(x.size());
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.rms_norm(i, x.data(), weight.data(), norm_scalar.data(), rows, n, 1e-5f);
  });
  cpu.ok([&](const auto& api, lpx_instance* i) {
    return api.rms_norm(i, x.data(), weight.data(), norm_cpu.data(), rows, n, 1e-5f);
  });
  EXPECT_TRUE(same_bits(norm_scalar, norm_cpu)) << "rms_norm";

  const std::vector<std::int32_t> positions = {5, 17, 39};
  for (std::int32_t mode : {LPX_ROPE_NORMAL, LPX_ROPE_NEOX}) {
    const lpx_rope_params params{sizeof(lpx_rope_params), mode, head_dim, 10000.0f, 1.0f, nullptr, 1.0f};
    auto rot_scalar = x, rot_cpu = x;
    scalar.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_scalar.data(), rows, heads, head_dim, positions.data(), &params);
    });
    cpu.ok([&](const auto& api, lpx_instance* i) {
      return api.rope(i, rot_cpu.data(), rows, heads, head_dim, positions.data(), &params);
    });
    EXPECT_TRUE(same_bits(rot_scalar, rot_cpu)) << "rope mode " << mode;
  }

  const auto up = random.normal(x.size(), 1.0f);
  std::vector<float> act_scalar(x.size()), act_cpu(x.size());
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.swiglu(i, x.data(), up.data(), act_scalar.data(), x.size());
  });
  cpu.ok([&](const auto& api, lpx_instance* i) {
    return api.swiglu(i, x.data(), up.data(), act_cpu.data(), x.size());
  });
  EXPECT_TRUE(same_bits(act_scalar, act_cpu)) << "swiglu";

  ops_test::PagedCache cache(random, context, kv_heads, head_dim, 8);
  const auto q = random.normal(rows * n, 1.0f);
  std::vector<float> att_scalar(q.size()), att_cpu(q.size());
  const auto args_scalar = ops_test::attention_args(cache, q, att_scalar, positions, heads);
  const auto args_cpu = ops_test::attention_args(cache, q, att_cpu, positions, heads);
  scalar.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &args_scalar); });
  cpu.ok([&](const auto& api, lpx_instance* i) { return api.attention(i, &args_cpu); });
  EXPECT_TRUE(same_bits(att_scalar, att_cpu)) << "attention";

  kernels::matmul_test::Random weights(6);
  const auto data = weights.weights(LPX_TENSOR_Q8_0, 96, 576);
  const lpx_tensor_view w = view(LPX_TENSOR_Q8_0, 96, 576, data);
  std::vector<float> row_scalar(576), row_cpu(576);
  scalar.ok([&](const auto& api, lpx_instance* i) {
    return api.dequantize_row(i, &w, 95, row_scalar.data());
  });
  cpu.ok([&](const auto& api, lpx_instance* i) {
    return api.dequantize_row(i, &w, 95, row_cpu.data());
  });
  EXPECT_TRUE(same_bits(row_scalar, row_cpu)) << "dequantize_row";
  const auto xm = weights.activations(rows, 576);
  EXPECT_TRUE(same_bits(scalar.matmul(w, xm, rows), cpu.matmul(w, xm, rows))) << "matmul";
}

TEST_F(CpuBackend, RefusesBadArgumentsWithAStatus) {
  Backend cpu(services, "cpu");
  auto expect_error = [&](lpx_status* status, const char* what) {
    ASSERT_NE(status, nullptr) << what;
    status->release(status);
  };
  std::vector<std::uint8_t> data(64, 0);
  lpx_tensor_view w = view(LPX_TENSOR_Q4_0, 1, 8, data);  // not a whole 32-element block
  float x[8] = {}, y[8] = {};
  expect_error(cpu.api().matmul(cpu.raw(), &w, x, y, 1), "partial block");
  w = view(LPX_TENSOR_F32, 1, 8, data);
  w.size_bytes = 16;
  expect_error(cpu.api().matmul(cpu.raw(), &w, x, y, 1), "short data");
  w.size_bytes = 32;
  expect_error(cpu.api().dequantize_row(cpu.raw(), &w, 1, y), "missing row");
  EXPECT_EQ(cpu.api().supports_type(cpu.raw(), 99), 0);

  const lpx_rope_params odd{sizeof(lpx_rope_params), LPX_ROPE_NORMAL, 3, 10000.0f, 1.0f, nullptr, 1.0f};
  const std::int32_t position = 0;
  expect_error(cpu.api().rope(cpu.raw(), y, 1, 1, 8, &position, &odd), "odd n_rot");

  lpx_attention_args bad{};
  bad.struct_size = sizeof bad;
  bad.n_rows = 1;
  bad.n_heads = 3;
  bad.n_kv_heads = 2;
  expect_error(cpu.api().attention(cpu.raw(), &bad), "kv heads not dividing heads");
}

}  // namespace
}  // namespace lpx::core
