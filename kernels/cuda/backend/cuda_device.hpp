// Choosing the GPU a cuda backend instance runs on, and saying plainly why when none can be
// used: no driver, a driver older than this plugin's CUDA runtime, no visible device, an index
// out of range, or a GPU this build carries no kernels for. Never a silent CPU fallback: the
// caller asked for CUDA, so the reason is the error.
#pragma once

#include <cstddef>
#include <string>

namespace lpx::cuda_backend {

struct CudaDevice {
  int index = 0;
  std::string name;          // "NVIDIA H200"
  int major = 0, minor = 0;  // compute capability
  int multiprocessors = 0;
  std::size_t total_bytes = 0;
  std::string describe() const;  // "NVIDIA H200 (cuda:0, sm_90, 139.8 GiB)"
};

// Makes device `index` current on this thread and checks that this build's kernels run on it.
// Throws lpx::Error (LPX_ERR_UNSUPPORTED) with the reason and what to do about it.
CudaDevice open_cuda_device(int index);

// "12.4"-style text of a CUDA version number (1000 * major + 10 * minor).
std::string cuda_version_text(int version);

}  // namespace lpx::cuda_backend
