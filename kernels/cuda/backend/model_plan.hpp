// What a model takes on the GPU, decided before anything is allocated: how much device memory
// it needs, by part, so that a model that cannot fit is refused with the numbers (whether the
// kernels can run it at all: dense_model.hpp).
#pragma once

#include <cstddef>

#include <lpx/kinds/quant_backend.h>

#include "dense_model.hpp"
#include "device_matmul.hpp"

namespace lpx::cuda_backend {

inline constexpr int kAttentionRows = 64;    // query rows per attention launch (bounds its scratch)

struct MemoryPlan {
  std::size_t weights = 0, kv_cache = 0, workspace = 0;
  std::size_t total() const noexcept { return weights + kv_cache + workspace; }
};

// The largest products the model's DeviceMatmul must serve.
DeviceMatmul::Limits matmul_limits(const DenseModel& desc);

// Device memory a model of `desc` takes (weights, KV cache, workspace with headroom).
MemoryPlan plan_memory(const DenseModel& desc);

}  // namespace lpx::cuda_backend
