// On-GPU greedy sampling: argmax_rows, one block per row of logits; argmax_finish, the end of
// the argmax fused into the output head's GEMV (argmax_key.cuh holds the same order as keys).
//
// Order: a NaN ranks below every number (-inf included), so a row with a single NaN still picks
// its largest real logit; among equal values (+0 and -0 are equal) the lowest index wins; a row
// of NaNs only gives 0. The result is the same whatever the thread count or scan order, since
// `better` is a strict total order on (value, index) pairs.
#include "cuda/argmax_key.cuh"
#include "cuda/dependent_launch.cuh"
#include "cuda/launch.hpp"

#include <cstdint>

namespace lpx::kernels::cuda {
namespace {

constexpr int kArgmaxThreads = 256;
constexpr int kArgmaxWarps = kArgmaxThreads / 32;
constexpr std::int32_t kNoIndex = 0x7FFFFFFF;  // beaten by every real candidate

struct Candidate {
  float value;
  std::int32_t index;
};

// True when a ranks before b.
__device__ bool better(Candidate a, Candidate b) {
  const bool a_nan = isnan(a.value);
  const bool b_nan = isnan(b.value);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a.value != b.value) return a.value > b.value;
  return a.index < b.index;
}

__device__ Candidate warp_best(Candidate c) {
  for (int offset = 16; offset > 0; offset /= 2) {
    const Candidate other{__shfl_xor_sync(0xFFFFFFFFu, c.value, offset),
                          __shfl_xor_sync(0xFFFFFFFFu, c.index, offset)};
    if (better(other, c)) c = other;
  }
  return c;
}

__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_rows_kernel(const float* logits, int n, std::int32_t* out) {
  const float* row = logits + static_cast<std::size_t>(blockIdx.x) * n;
  Candidate best{__int_as_float(0x7FC00000), kNoIndex};  // a NaN with no index: the worst
  for (int i = threadIdx.x; i < n; i += kArgmaxThreads) {
    const Candidate c{row[i], i};
    if (better(c, best)) best = c;
  }

  __shared__ Candidate warp_bests[kArgmaxWarps];
  best = warp_best(best);
  if (threadIdx.x % 32 == 0) warp_bests[threadIdx.x / 32] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kArgmaxWarps; ++w) {
      if (better(warp_bests[w], best)) best = warp_bests[w];
    }
    out[blockIdx.x] = best.index;
  }
}

__global__ void argmax_finish_kernel(unsigned long long* keys, int rows, std::int32_t* out) {
  detail::allow_next_kernel();  // launched as a dependent (dependent_launch.cuh)
  detail::wait_for_previous_kernel();
  for (int b = static_cast<int>(threadIdx.x); b < rows; b += static_cast<int>(blockDim.x)) {
    out[b] = detail::take_argmax(keys + b);
  }
}

}  // namespace

void argmax_finish(unsigned long long* keys, int rows, std::int32_t* out, cudaStream_t stream) {
  if (rows <= 0) return;
  detail::launch_dependent(argmax_finish_kernel, dim3(1), dim3(64), stream, keys, rows, out);
}

void argmax_rows(const float* logits, int rows, int n, std::int32_t* out, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;  // no index to give
  argmax_rows_kernel<<<rows, kArgmaxThreads, 0, stream>>>(logits, n, out);
}

}  // namespace lpx::kernels::cuda
