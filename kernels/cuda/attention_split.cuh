// How split-K attention (attention.cu) cuts a row's attended positions into chunks: at most
// `splits` chunks of equal length, a multiple of kSplitTile, the last one possibly shorter.
// A function of the row's own positions and the split count only, so a row's result does not
// depend on the batch it runs in. Host and device share it (tests/cuda/attention_split_test).
#pragma once

#include <cuda_runtime.h>

namespace lpx::kernels::cuda::detail {

inline constexpr int kSplitTile = 32;  // positions per softmax step of attention_kernel

// Chunk c covers positions [begin_of(c), end_of(c)), c < used.
struct AttentionSplit {
  int first_position;  // the row's first attended position (its window's start)
  int end;             // one past the row's own position
  int length;          // positions per chunk: a multiple of kSplitTile
  int used;            // chunks holding positions, 1 .. splits
  __host__ __device__ int begin_of(int c) const { return first_position + c * length; }
  __host__ __device__ int end_of(int c) const {
    const int e = begin_of(c) + length;
    return e < end ? e : end;
  }
};

// The split of a row at `position` attending `window` positions (0: all) into at most `splits`.
__host__ __device__ inline AttentionSplit split_attention(int position, int window, int splits) {
  AttentionSplit s;
  s.first_position = window <= 0 || position < window ? 0 : position - window + 1;
  s.end = position + 1;
  const int n = s.end - s.first_position;
  const int per_split = (n + splits - 1) / splits;
  s.length = (per_split + kSplitTile - 1) / kSplitTile * kSplitTile;
  s.used = (n + s.length - 1) / s.length;
  return s;
}

}  // namespace lpx::kernels::cuda::detail
