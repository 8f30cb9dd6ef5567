// The split-K attention kernel's thread-block body (attention.cu has the design and the error
// bound), shared by attention.cu's kernel and the persistent decode kernel
// (decode_megakernel.cu), which runs the same blocks as work items. Private to kernels/cuda.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/attention_split.cuh"
#include "cuda/dependent_launch.cuh"
#include "cuda/device_math.cuh"
#include "cuda/elementwise_math.cuh"
#include "cuda/launch.hpp"

namespace lpx::kernels::cuda::attention_kernels {

using detail::exp_approx;
using detail::sub_rn;

inline constexpr int kThreads = 128;  // per thread block
inline constexpr int kWarps = kThreads / 32;
inline constexpr int kTile = detail::kSplitTile;  // positions per softmax step: one lane each
inline constexpr int kMaxGroup = 8;   // query heads served by one pass over K and V
inline constexpr int kMaxGridYZ = 65535;
inline constexpr float kNegInf = -INFINITY;

// Start of the partial of (row, query head, chunk): head_dim accumulators, then max and sum.
__device__ inline std::size_t partial_offset(int row, int head, int chunk, int n_heads, int chunks,
                                             int head_dim) {
  return ((static_cast<std::size_t>(row) * n_heads + head) * chunks + chunk) *
         static_cast<std::size_t>(head_dim + 2);
}

// The f16 vector of kv head `kv_head` at position t of the sequence whose block table is `table`.
__device__ inline const __half2* cache_vector(const AttentionArgs& a, const std::uint16_t* pool,
                                              const std::int32_t* table, int t, int kv_head) {
  const auto block = static_cast<std::size_t>(table[t / a.block_size]);
  const std::size_t slot = block * a.block_size + t % a.block_size;
  return reinterpret_cast<const __half2*>(pool + (slot * a.n_kv_heads + kv_head) * a.head_dim);
}

// Asks L2 for the K and V vectors of positions [begin, end), one 128-byte line per request,
// spread over the block's threads. Only a hint: see the header on what it may touch.
template <int D>
__device__ void prefetch_history(const AttentionArgs& a, const std::int32_t* table, int begin,
                                 int end, int kv_head) {
  constexpr int kLines = (D * 2 + 127) / 128;  // lines per f16 vector
  const int count = max(0, end - begin);
  for (int i = static_cast<int>(threadIdx.x); i < count * kLines * 2; i += kThreads) {
    const int t = begin + i / (kLines * 2);
    const int line = i % kLines;
    const std::uint16_t* pool = (i / kLines) % 2 == 0 ? a.k_pool : a.v_pool;
    const auto* vector = reinterpret_cast<const char*>(cache_vector(a, pool, table, t, kv_head));
    detail::prefetch_to_l2(vector + line * 128);
  }
}

// Output dim d of query head `head`: the partials of chunks [0, used) merged, log-sum-exp over
// their maxima, divided by the merged sum; chunks with max = -inf add nothing. The partials
// were written by other blocks of this launch: read past L1.
__device__ inline float merge_chunks(const AttentionArgs& a, int row, int head, int d, int used,
                                     int dim) {
  const int stride = dim + 2;
  const float* partials = a.partial + partial_offset(row, head, 0, a.n_heads, a.splits, dim);
  float max = kNegInf;
  for (int c = 0; c < used; ++c) max = fmaxf(max, __ldcg(partials + c * stride + dim));
  float sum = 0.0f;
  float acc = 0.0f;
  for (int c = 0; c < used; ++c) {
    const float m = __ldcg(partials + c * stride + dim);
    if (m == kNegInf) continue;
    const float scale = exp_approx(sub_rn(m, max));
    sum = fmaf(__ldcg(partials + c * stride + dim + 1), scale, sum);
    acc = fmaf(__ldcg(partials + c * stride + d), scale, acc);
  }
  return detail::div_rn(acc, sum);
}

// The body of the kernel for thread block (row, kv_head, chunk): blockIdx in attention.cu's
// kernel, a work item of the persistent decode kernel (decode_megakernel.cu).
template <int D>
__device__ __forceinline__ void attention_block(const AttentionArgs& a, int row, int kv_head,
                                                int chunk) {
  constexpr int kPairs = D / 2;               // K and V are read as half2
  constexpr int kPositionGroups = kThreads / kPairs;  // positions the V pass takes side by side
  static_assert(D % 2 == 0 && kPositionGroups >= 1, "head_dim: even, at most 2 * kThreads");

  __shared__ float2 q_s[kMaxGroup][kPairs];  // q of the slice's heads, rounded to f16
  __shared__ float w_s[kMaxGroup][kTile];    // the tile's scores, then its softmax weights
  __shared__ float max_s[kMaxGroup];         // running max and sum of each head
  __shared__ float sum_s[kMaxGroup];
  __shared__ float alpha_s[kMaxGroup];       // rescale of the accumulators after a new max
  __shared__ float2 acc_s[kPositionGroups][kMaxGroup][kPairs];

  detail::allow_next_kernel();  // launched as a dependent (dependent_launch.cuh)
  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int group = a.n_heads / a.n_kv_heads;
  const int position = a.positions[row];  // an uploaded input: readable before the wait

  const detail::AttentionSplit split = detail::split_attention(position, a.window, a.splits);
  if (chunk >= split.used) {  // the whole block: no barrier skipped
    detail::wait_for_previous_kernel();  // finish after the previous kernel, as every kernel
    return;
  }
  const int used = split.used;
  const int begin = split.begin_of(chunk);
  const int end = split.end_of(chunk);
  const std::int32_t* table =
      a.block_tables + static_cast<std::size_t>(a.row_sequence[row]) * a.block_table_stride;
  prefetch_history<D>(a, table, begin, min(begin + kTile, min(end, position)), kv_head);
  detail::wait_for_previous_kernel();
  const int pair = tid % kPairs;       // V pass: this thread's dims 2 * pair, 2 * pair + 1
  const int pos_group = tid / kPairs;  // ... at positions pos_group + k * kPositionGroups of a tile

  for (int head0 = 0; head0 < group; head0 += kMaxGroup) {
    const int heads = min(kMaxGroup, group - head0);
    const int first_head = kv_head * group + head0;
    const float* q = a.q + (static_cast<std::size_t>(row) * a.n_heads + first_head) * D;
    for (int i = tid; i < heads * kPairs; i += kThreads) {
      const int g = i / kPairs;
      const int p = i % kPairs;
      q_s[g][p] = make_float2(detail::round_to_f16(q[g * D + 2 * p]),
                              detail::round_to_f16(q[g * D + 2 * p + 1]));
    }
    if (tid < kMaxGroup) {
      max_s[tid] = kNegInf;
      sum_s[tid] = 0.0f;
    }
    float2 acc[kMaxGroup];
#pragma unroll
    for (int g = 0; g < kMaxGroup; ++g) acc[g] = make_float2(0.0f, 0.0f);
    __syncthreads();

    for (int tile = begin; tile < end; tile += kTile) {
      const int count = min(kTile, end - tile);

      // 1. Scores: a warp per position, its lanes across the dim pairs.
      for (int j = warp; j < count; j += kWarps) {
        const __half2* k = cache_vector(a, a.k_pool, table, tile + j, kv_head);
        float dot[kMaxGroup];
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) dot[g] = 0.0f;
        for (int p = lane; p < kPairs; p += 32) {
          const float2 kf = __half22float2(k[p]);
#pragma unroll
          for (int g = 0; g < kMaxGroup; ++g) {
            if (g < heads) dot[g] = fmaf(q_s[g][p].y, kf.y, fmaf(q_s[g][p].x, kf.x, dot[g]));
          }
        }
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
          if (g < heads) {  // uniform across the block, so every lane joins the shuffles
            const float s = detail::warp_sum(dot[g]);
            if (lane == 0) {
              const float score = detail::mul_rn(s, a.scale);
              w_s[g][j] = a.softcap > 0.0f ? detail::soft_cap(score, a.softcap) : score;
            }
          }
        }
      }
      __syncthreads();

      // 2. Online softmax: a warp per head, a lane per position of the tile.
      for (int g = warp; g < heads; g += kWarps) {
        const float s = lane < count ? w_s[g][lane] : kNegInf;
        const float old_max = max_s[g];  // read by every lane before lane 0 updates it below
        const float new_max = fmaxf(old_max, detail::warp_max(s));
        const float w = lane < count ? exp_approx(sub_rn(s, new_max)) : 0.0f;
        w_s[g][lane] = w;
        const float tile_sum = detail::warp_sum(w);
        if (lane == 0) {
          const float alpha = exp_approx(sub_rn(old_max, new_max));  // exp(-inf) = 0 at first
          alpha_s[g] = alpha;
          sum_s[g] = fmaf(sum_s[g], alpha, tile_sum);
          max_s[g] = new_max;
        }
      }
      __syncthreads();

      // 3. The weighted sum of V, rescaled to the new max first.
      if (pos_group < kPositionGroups) {
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g) {
          if (g < heads) {
            acc[g].x *= alpha_s[g];
            acc[g].y *= alpha_s[g];
          }
        }
        for (int j = pos_group; j < count; j += kPositionGroups) {
          const __half2* v = cache_vector(a, a.v_pool, table, tile + j, kv_head);
          const float2 vf = __half22float2(v[pair]);
#pragma unroll
          for (int g = 0; g < kMaxGroup; ++g) {
            if (g < heads) {
              acc[g].x = fmaf(w_s[g][j], vf.x, acc[g].x);
              acc[g].y = fmaf(w_s[g][j], vf.y, acc[g].y);
            }
          }
        }
      }
      __syncthreads();  // the next tile overwrites w_s and alpha_s
    }

    // 4. Add up the position groups; the whole row's output, or this chunk's partials.
    if (pos_group < kPositionGroups) {
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g) {
        if (g < heads) acc_s[pos_group][g][pair] = acc[g];
      }
    }
    __syncthreads();
    for (int i = tid; i < heads * kPairs; i += kThreads) {
      const int g = i / kPairs;
      const int p = i % kPairs;
      float2 total = acc_s[0][g][p];
      for (int k = 1; k < kPositionGroups; ++k) {
        total.x += acc_s[k][g][p].x;
        total.y += acc_s[k][g][p].y;
      }
      if (used == 1) {
        float* out = a.out + (static_cast<std::size_t>(row) * a.n_heads + first_head + g) * D;
        out[2 * p] = detail::div_rn(total.x, sum_s[g]);
        out[2 * p + 1] = detail::div_rn(total.y, sum_s[g]);
      } else {
        float* partial =
            a.partial + partial_offset(row, first_head + g, chunk, a.n_heads, a.splits, D);
        partial[2 * p] = total.x;
        partial[2 * p + 1] = total.y;
      }
    }
    if (tid < heads && used > 1) {
      float* partial =
          a.partial + partial_offset(row, first_head + tid, chunk, a.n_heads, a.splits, D);
      partial[D] = max_s[tid];
      partial[D + 1] = sum_s[tid];
    }
    __syncthreads();  // the next slice reuses q_s, max_s, sum_s and acc_s
  }
  if (used == 1) return;

  // 5. The last of the row's chunks to finish merges them all (threadFenceReduction's pattern:
  // partials visible device-wide before the count that announces them).
  __shared__ bool last_s;
  __threadfence();
  __syncthreads();
  std::uint32_t* counter =
      a.chunk_counters + static_cast<std::size_t>(row) * a.n_kv_heads + kv_head;
  if (tid == 0) last_s = atomicAdd(counter, 1u) == static_cast<std::uint32_t>(used - 1);
  __syncthreads();
  if (!last_s) return;
  if (tid == 0) *counter = 0;  // ready for the next launch
  __threadfence();
  for (int i = tid; i < group * D; i += kThreads) {
    const int head = kv_head * group + i / D;
    const int d = i % D;
    a.out[(static_cast<std::size_t>(row) * a.n_heads + head) * D + d] =
        merge_chunks(a, row, head, d, used, D);
  }
}

// The arguments attention() launches the kernel for (head sizes aside): checked by it at each
// launch and by the persistent kernel once at load.
inline bool attention_args_valid(const AttentionArgs& a) {
  return a.n_heads > 0 && a.n_kv_heads > 0 && a.n_heads % a.n_kv_heads == 0 &&
         a.n_kv_heads <= kMaxGridYZ && a.block_size > 0 && a.splits > 0 &&
         a.splits <= kMaxAttentionSplits &&
         (a.splits == 1 || (a.partial != nullptr && a.chunk_counters != nullptr));
}

}  // namespace lpx::kernels::cuda::attention_kernels
