// The paged KV cache on the GPU: kv_store writes a step's K and V rows into their slots, and
// attention() is split-K flash-decoding over the paged f16 pool, in one kernel:
//
// attention_kernel, one block per (row, kv head, split). A row attending n positions (its
// window: first_position .. position) cuts them into at most `splits` chunks of equal length,
// a multiple of kTile (so at least 32 positions): length = roundup(ceil(n / splits), kTile),
// used = ceil(n / length) chunks; blocks past `used` exit at once. The split count is fixed
// per model (attention_splits: about two blocks per SM at batch 1), so a batch-1 step at a
// 512-token context runs 16 chunks per kv head instead of 2, and a row's chunks -- hence its
// result, bit for bit -- depend only on its own positions, never on the batch it runs in.
// A block serves every query head of its kv head (the GQA group, in slices of kMaxGroup
// heads), so each K and V vector is read once per slice. Positions go by tiles of kTile: the
// tile's scores q.k (q rounded to f16, as the reference rounds it; products of two f16 values
// are exact in f32, so only the order of the f32 additions differs), then an online-softmax
// step in f32 (running max and sum, exp = the reference's exp_approx), then the weighted sum
// of V. Then:
//  - a row whose positions fit in one chunk (short contexts): that chunk's block divides by
//    the sum and writes the output; nothing else runs;
//  - otherwise each chunk writes, per query head, its unnormalised accumulators, max and sum,
//    and counts itself done on the (row, kv head)'s counter; the block that finishes last (the
//    counter reaching `used`) merges them, log-sum-exp in chunk order (so the result does not
//    depend on which block is last), and resets the counter.
// Before its dependent-launch wait a block reads only uploaded inputs (positions, block tables)
// and asks L2 for the K and V of its first tile's positions before the row's own. Those are
// history, except in a step with several rows of one sequence, where rope_and_store may still
// be writing some of them: harmless for a prefetch (a hint; L2 is the point of coherence), so
// it must never become a load before the wait. q and the K/V themselves are read after it.
// A soft cap bends each scaled score as the reference does. One launch per call: no merge
// kernel.
//
// Difference from kernels/reference (ops_attention.cpp): the reference normalises the softmax
// weights first and rounds each to f16 before the sum over V; here the weights stay f32 and the
// division comes last. The reference's rounding moves each weight by up to 2^-11 of itself
// (2^-25 absolute below f16's normal range), so out[d] differs from it by at most about
// 2^-11 * sum_t w_t |v_t[d]| + 2^-25 * sum_t |v_t[d]|, plus f32 summation-order noise; this
// kernel sits closer to the exact softmax than the reference does. tests/cuda/attention_test.cpp
// checks both bounds.
//
// The grid depends only on n_rows, n_kv_heads and splits, never on device data or on the
// context length, so a captured graph replays correctly for any positions and block tables,
// and the scratch is rows x heads x splits partials whatever the context.
#include "cuda/launch.hpp"
#include "cuda/attention_block.cuh"
#include "cuda/attention_generic.cuh"
#include "cuda/dependent_launch.cuh"
#include "cuda/elementwise_math.cuh"

#include <algorithm>
#include <cmath>

namespace lpx::kernels::cuda {
namespace {

using attention_kernels::kThreads;

template <int D>
__global__ void __launch_bounds__(kThreads) attention_kernel(const AttentionArgs a) {
  attention_kernels::attention_block<D>(a, static_cast<int>(blockIdx.x),
                                        static_cast<int>(blockIdx.y),
                                        static_cast<int>(blockIdx.z));
}

__global__ void kv_store_kernel(const float* k, const float* v, std::uint16_t* k_pool,
                                std::uint16_t* v_pool, const std::int32_t* slots, int width) {
  const int row = blockIdx.x;
  const std::int32_t slot = slots[row];
  if (slot < 0) return;  // a padding row (e.g. of a captured graph) stores nothing
  const float* k_row = k + static_cast<std::size_t>(row) * width;
  const float* v_row = v + static_cast<std::size_t>(row) * width;
  const std::size_t base = static_cast<std::size_t>(slot) * width;
  for (int i = threadIdx.x; i < width; i += blockDim.x) {
    k_pool[base + i] = detail::f32_to_f16_bits(k_row[i]);
    v_pool[base + i] = detail::f32_to_f16_bits(v_row[i]);
  }
}

template <int D>
void launch_attention(const AttentionArgs& a, cudaStream_t stream) {
  detail::launch_dependent(attention_kernel<D>, dim3(a.n_rows, a.n_kv_heads, a.splits),
                           dim3(kThreads), stream, a);
}

}  // namespace

void kv_store(const float* k, const float* v, std::uint16_t* k_pool, std::uint16_t* v_pool,
              const std::int32_t* slots, int rows, int width, cudaStream_t stream) {
  if (rows <= 0 || width <= 0) return;
  kv_store_kernel<<<rows, 256, 0, stream>>>(k, v, k_pool, v_pool, slots, width);
}

int attention_splits(int multiprocessors, int n_kv_heads) noexcept {
  if (multiprocessors <= 0 || n_kv_heads <= 0) return 1;
  const int blocks = 2 * multiprocessors;  // two per SM: one loads while the other computes
  return std::clamp((blocks + n_kv_heads - 1) / n_kv_heads, 1, kMaxAttentionSplits);
}

std::size_t attention_partial_floats(int max_rows, int n_heads, int head_dim,
                                     int splits) noexcept {
  if (max_rows <= 0 || n_heads <= 0 || head_dim <= 0 || splits <= 1) return 0;
  return static_cast<std::size_t>(max_rows) * n_heads * splits *
         (static_cast<std::size_t>(head_dim) + 2);
}

void attention(const AttentionArgs& a, cudaStream_t stream) {
  if (a.n_rows <= 0) return;
  if (!attention_kernels::attention_args_valid(a)) {
    detail::report_invalid_arguments(stream);
    return;
  }
  switch (a.head_dim) {
    case 64: launch_attention<64>(a, stream); break;
    case 80: launch_attention<80>(a, stream); break;
    case 96: launch_attention<96>(a, stream); break;
    case 128: launch_attention<128>(a, stream); break;
    case 256: launch_attention<256>(a, stream); break;
    default:
      if (detail::attention_any_head_dim_supports(a.head_dim)) {
        detail::attention_any_head_dim(a, stream);  // tiny models: correct, not fast
      } else {
        detail::report_invalid_arguments(stream);
      }
      break;
  }
}

}  // namespace lpx::kernels::cuda
