// The process-wide switch of programmatic dependent launch (dependent_launch.cuh).
#include <atomic>

#include "cuda/dependent_launch.cuh"
#include "cuda/launch.hpp"

namespace lpx::kernels::cuda {
namespace {

std::atomic<bool> overlap{false};

// Compiled like every kernel of this library: its code for the current device tells whether the
// kernels there carry the griddepcontrol instructions (sm_90 code), or were JIT-compiled from
// older PTX without them -- then a dependent launch would not wait.
__global__ void overlap_probe_kernel() { detail::wait_for_previous_kernel(); }

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
      cudaFuncAttributes attributes{};
      enabled = major >= 9 &&
                cudaFuncGetAttributes(&attributes, overlap_probe_kernel) == cudaSuccess &&
                attributes.ptxVersion >= 90 && attributes.binaryVersion >= 90;
      (void)cudaGetLastError();
    }
  }
  overlap.store(enabled, std::memory_order_relaxed);
  return enabled;
}

namespace detail {

bool kernel_overlap_enabled() noexcept { return overlap.load(std::memory_order_relaxed); }

}  // namespace detail
}  // namespace lpx::kernels::cuda
