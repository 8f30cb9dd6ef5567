#include "cuda/dependent_launch.cuh"
#include "cuda/launch.hpp"

namespace lpx::kernels::cuda {
namespace {

// One block per gathered row; consecutive threads copy consecutive floats. A dependent launch
// (dependent_launch.cuh): x is the previous kernel's output.
__global__ void gather_rows_kernel(const float* __restrict__ x, const std::int32_t* __restrict__ rows,
                                   int width, float* __restrict__ out) {
  detail::allow_next_kernel();
  detail::wait_for_previous_kernel();
  const float* from = x + static_cast<std::size_t>(rows[blockIdx.x]) * width;
  float* to = out + static_cast<std::size_t>(blockIdx.x) * width;
  for (int j = threadIdx.x; j < width; j += blockDim.x) to[j] = from[j];
}

}  // namespace

void gather_rows(const float* x, const std::int32_t* rows, int n, int width, float* out,
                 cudaStream_t stream) {
  if (n <= 0) return;
  detail::launch_dependent(gather_rows_kernel, dim3(n), dim3(256), stream, x, rows, width, out);
}

cudaError_t probe_kernel_image() noexcept {
  cudaFuncAttributes attributes{};
  return cudaFuncGetAttributes(&attributes, gather_rows_kernel);
}

}  // namespace lpx::kernels::cuda
