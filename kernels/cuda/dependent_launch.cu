// The process-wide switch of programmatic dependent launch (dependent_launch.cuh).
#include <atomic>

#include "cuda/dependent_launch.cuh"
#include "cuda/launch.hpp"

namespace lpx::kernels::cuda {
namespace {

std::atomic<bool> overlap{false};

}  // namespace

bool set_kernel_overlap(bool enabled) noexcept {
  if (enabled) {
    int device = 0;
    int major = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) !=
            cudaSuccess) {
      (void)cudaGetLastError();
      enabled = false;
    } else {
      enabled = major >= 9;
    }
  }
  overlap.store(enabled, std::memory_order_relaxed);
  return enabled;
}

namespace detail {

bool kernel_overlap_enabled() noexcept { return overlap.load(std::memory_order_relaxed); }

}  // namespace detail
}  // namespace lpx::kernels::cuda
