// Programmatic dependent launch (Hopper, sm_90, and newer): a decode kernel may be launched
// while the kernel before it on the stream is still running, and waits inside for that
// kernel's results. What overlaps is the launch itself and whatever a kernel does before it
// waits -- the GEMV asks L2 for its first weights, which do not depend on anything earlier.
//
// The rules that keep it correct, for every kernel launched through launch_dependent():
//  - it calls wait_for_previous_kernel() before it reads anything an earlier kernel writes, and
//    before it writes anything (it must not finish before its predecessor: the next kernel's
//    wait then covers every earlier kernel, not only the last one);
//  - it calls allow_next_kernel() early: the next kernel's blocks may then be scheduled once
//    every block of this one has started (they still wait for this one to finish).
// Kernels launched with <<<>>> wait for everything before them, as always. Private to
// kernels/cuda; switched on by set_kernel_overlap (launch.hpp).
#pragma once

#include <cuda_runtime.h>

#include <utility>

namespace lpx::kernels::cuda::detail {

__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void allow_next_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" :::);
#endif
}

// Asks L2 for the cache line holding p (no register, no fault on an invalid address).
__device__ __forceinline__ void prefetch_to_l2(const void* p) {
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// True when launch_dependent() sets the programmatic-serialisation attribute (launch.hpp's
// set_kernel_overlap, on a GPU that supports it).
bool kernel_overlap_enabled() noexcept;

// kernel<<<grid, block, 0, stream>>>(args...), with programmatic dependent launch when enabled.
// The kernel must follow the rules above.
template <typename... Params, typename... Args>
void launch_dependent(void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t stream,
                      Args&&... args) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute.val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = 0;
  config.stream = stream;
  config.attrs = &attribute;
  config.numAttrs = kernel_overlap_enabled() ? 1 : 0;
  // A failed launch leaves its error for the caller's cudaGetLastError(), as <<<>>> does.
  (void)cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
}

}  // namespace lpx::kernels::cuda::detail
