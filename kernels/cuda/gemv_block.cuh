// The GEMV's thread-block body and its epilogue (gemv.cu has the design and the error bound),
// shared by gemv.cu's kernels and the persistent decode kernel (decode_megakernel.cu), which
// runs the same blocks as work items. Private to kernels/cuda.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>

#include "cuda/argmax_key.cuh"
#include "cuda/dependent_launch.cuh"
#include "cuda/elementwise_math.cuh"
#include "cuda/launch.hpp"
#include "cuda/quant_blocks.cuh"

namespace lpx::kernels::cuda::gemv_kernels {

namespace q = quant;

inline constexpr int kThreads = 128;  // per thread block, every gemv kernel
inline constexpr int kWarps = kThreads / 32;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;  // the same bits in every lane: each step adds the same two values in every pair
}
__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, offset);
  return v;
}

// ---- gemv ------------------------------------------------------------------------------------

struct GemvArgs {
  const std::uint8_t* data;
  std::size_t row_bytes;
  std::int64_t rows;
  std::int64_t columns;
  const float* x;
  const float* norm_weight;  // null: x is used as it is
  float norm_eps;
  GemvOutput out;  // checked by the launcher against rows
};

// The output head's scale and soft cap (scale_and_cap's arithmetic). Not inlined: the soft
// cap's double tanh would otherwise take registers from every GEMV's main loop.
// Scalars by value: a reference to the kernel-parameter struct would make the compiler copy
// it into local memory.
__device__ __noinline__ inline float scale_and_cap_value(float value, float scale, float softcap) {
  if (scale != 1.0f) value = __fmul_rn(value, scale);
  if (softcap > 0.0f) value = detail::soft_cap(value, softcap);
  return value;
}

// Output row `row` of activation row b: into its part's buffer, plus the part's bias (added in
// f32 after the dot product, as the reference adds it after its matmul), written or added.
// Then the logit scale and soft cap, where set. Returns the value stored (before any add).
__device__ __forceinline__ float store_row(const GemvOutput& out, int b, std::int64_t row,
                                           float value) {
  int p = 0;
  while (p + 1 < out.count && row >= out.parts[p].rows) row -= out.parts[p++].rows;
  const GemvPart& part = out.parts[p];
  if (part.bias != nullptr) value = __fadd_rn(value, part.bias[row]);
  if (out.scale != 1.0f || out.softcap > 0.0f) {
    value = scale_and_cap_value(value, out.scale, out.softcap);
  }
  float* y = part.y + b * part.rows + row;
  *y = out.store == GemvStore::kAccumulate ? __fadd_rn(*y, value) : value;
  return value;
}

// Weights times norm_weight[column...column + 3]: with a normalised input the products take
// w * norm_weight (the row's scale comes at the end), which keeps the activations as they are.
__device__ __forceinline__ float4 times_norm_weight(float4 w, const float* norm_weight,
                                                    std::int64_t column) {
  const float4 g = __ldg(reinterpret_cast<const float4*>(norm_weight + column));
  return make_float4(__fmul_rn(w.x, g.x), __fmul_rn(w.y, g.y), __fmul_rn(w.z, g.z),
                     __fmul_rn(w.w, g.w));
}

// The squares of a normalised input, summed in double over the columns this thread's units
// cover (the group's threads share out the units, so together they cover each column once).
// Run after the products, when the activations are in L1, so they hold no registers there.
template <typename F, int kBatch>
__device__ __forceinline__ void sum_squares(const GemvArgs& a, const float* x, int units,
                                            int index, int group_threads,
                                            double (&squares)[kBatch]) {
  for (int u = index; u < units; u += group_threads) {
    const int block = u / F::kUnitsPerBlock, sub = u % F::kUnitsPerBlock;
#pragma unroll
    for (int g = 0; g < F::kGroups; ++g) {
      const std::int64_t column =
          static_cast<std::int64_t>(block) * F::kBlockElements + F::group_column(sub, g);
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const float4 v = __ldcg(reinterpret_cast<const float4*>(x + b * a.columns + column));
        squares[b] += static_cast<double>(__fmul_rn(v.x, v.x)) +
                      static_cast<double>(__fmul_rn(v.y, v.y)) +
                      static_cast<double>(__fmul_rn(v.z, v.z)) +
                      static_cast<double>(__fmul_rn(v.w, v.w));
      }
    }
  }
}

// The end of every gemv kernel: sums each row group's partial dot products (and, for a
// normalised input, the squares of each activation row) over its threads in a fixed order,
// then stores rows [first_row, first_row + kRows) of each group for activation rows
// batch0 + b, b < batch. A group is group_threads consecutive threads (32, 64 or 128); group
// g's first row is block_row + g * kRows.
template <int kRows, int kBatch>
__device__ __forceinline__ void finish_rows(const GemvArgs& a, float (&dot)[kRows * kBatch],
                                            double (&squares)[kBatch], int group_threads,
                                            std::int64_t block_row, int batch0, int batch) {
  __shared__ float dot_sums[kWarps][kRows * kBatch];
  __shared__ double square_sums[kWarps][kBatch];
  __shared__ unsigned long long best_keys[kBatch];  // fused argmax: the block's best per row
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const bool norm = a.norm_weight != nullptr;
  if (threadIdx.x < kBatch) best_keys[threadIdx.x] = 0;  // before the barrier below
#pragma unroll
  for (int i = 0; i < kRows * kBatch; ++i) {
    const float v = warp_sum(dot[i]);
    if (lane == 0) dot_sums[warp][i] = v;
  }
  if (norm) {
#pragma unroll
    for (int b = 0; b < kBatch; ++b) {
      const double v = warp_sum(squares[b]);
      if (lane == 0) square_sums[warp][b] = v;
    }
  }
  __syncthreads();

  const int warps_per_group = group_threads / 32;
  const int groups = kThreads / group_threads;
  const bool pairs = stores_pairs(a.out.store);
  const int step = pairs ? 2 : 1;  // a pair's gate and up rows are stored by one thread
  const int items = kRows / step * kBatch;
  for (int i = static_cast<int>(threadIdx.x); i < groups * items; i += kThreads) {
    const int g = i / items, r = i % items / kBatch * step, b = i % kBatch;
    const std::int64_t row = block_row + static_cast<std::int64_t>(g) * kRows + r;
    if (row >= a.rows || b >= batch) continue;
    const int first_warp = g * warps_per_group;
    float scale = 1.0f;
    if (norm) {
      double total = square_sums[first_warp][b];
      for (int w = 1; w < warps_per_group; ++w) total += square_sums[first_warp + w][b];
      scale = detail::rms_scale(total, static_cast<int>(a.columns), a.norm_eps);
    }
    float value[2];
    for (int k = 0; k < step; ++k) {
      float sum = dot_sums[first_warp][(r + k) * kBatch + b];
      for (int w = 1; w < warps_per_group; ++w) {
        sum += dot_sums[first_warp + w][(r + k) * kBatch + b];
      }
      value[k] = norm ? __fmul_rn(scale, sum) : sum;
    }
    if (pairs) {
      const GemvPart& part = a.out.parts[0];
      const std::int64_t j = row / 2;
      part.y[(batch0 + b) * part.rows + j] =
          a.out.store == GemvStore::kGegluPairs
              ? detail::geglu_element(value[0], value[1])
              : detail::swiglu_element(value[0], value[1], j, part.rows);
    } else {
      const float stored = store_row(a.out, batch0 + b, row, value[0]);
      if (a.out.argmax_keys != nullptr) atomicMax(&best_keys[b], detail::argmax_key(stored, row));
    }
  }
  if (a.out.argmax_keys != nullptr) {  // uniform across the block
    __syncthreads();
    const int b = static_cast<int>(threadIdx.x);
    if (b < batch && best_keys[b] != 0) {
      detail::raise_key(a.out.argmax_keys + batch0 + b, best_keys[b]);
    }
  }
}

// The fast kernel's body for thread block `block_index` (blockIdx.x in gemv.cu's kernel, whose
// launch bounds set the register budget; a work item of the persistent decode kernel): units,
// kRows rows per group, kBatch activation rows. kGrouped: batch_groups groups of kBatch
// activation rows, from activation row first_batch_row on, in one launch: block i serves row
// block i / batch_groups for group i % batch_groups, so the blocks that read the same weight
// rows run side by side and all but the first find them in L2 -- each weight comes from memory
// about once per call. (A separate instantiation: the offsets cost registers the single-group
// kernels, batch 1 above all, need for loads.)
template <typename F, int kBatch, int kRows, bool kGrouped>
__device__ __forceinline__ void gemv_units_block(const GemvArgs& a, int units, int group_threads,
                                                 int batch_groups, int first_batch_row,
                                                 int block_index) {
  const int group = static_cast<int>(threadIdx.x) / group_threads;
  const int index = static_cast<int>(threadIdx.x) % group_threads;
  const int row_block = kGrouped ? block_index / batch_groups : block_index;
  const std::int64_t block_row =
      static_cast<std::int64_t>(row_block) * (kThreads / group_threads) * kRows;
  const int batch0 = kGrouped ? first_batch_row + block_index % batch_groups * kBatch : 0;
  const float* x = kGrouped ? a.x + static_cast<std::int64_t>(batch0) * a.columns : a.x;
  const std::int64_t first_row = block_row + static_cast<std::int64_t>(group) * kRows;

  // Rows past the end repeat the last row (loads stay in bounds); their sums are not stored.
  const std::uint8_t* row[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const std::int64_t clamped = first_row + r < a.rows ? first_row + r : a.rows - 1;
    row[r] = a.data + static_cast<std::size_t>(clamped) * a.row_bytes;
  }

  // The weights do not depend on earlier kernels: ask L2 for this thread's first ones while
  // the previous kernel finishes (dependent_launch.cuh), then wait for its results.
  detail::allow_next_kernel();
  if (index < units) {
    const int block = index / F::kUnitsPerBlock, sub = index % F::kUnitsPerBlock;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      detail::prefetch_to_l2(row[r] + static_cast<std::size_t>(block) * F::kBlockBytes +
                             sub * (F::kBlockBytes / F::kUnitsPerBlock));
    }
  }
  detail::wait_for_previous_kernel();

  float acc[kRows * kBatch];
#pragma unroll
  for (int i = 0; i < kRows * kBatch; ++i) acc[i] = 0.0f;
  const bool norm = a.norm_weight != nullptr;

  for (int u = index; u < units; u += group_threads) {
    const int block = u / F::kUnitsPerBlock, sub = u % F::kUnitsPerBlock;
    typename F::Unit unit[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      unit[r] = F::load(row[r] + static_cast<std::size_t>(block) * F::kBlockBytes, sub);
    }
    const std::int64_t block_column = static_cast<std::int64_t>(block) * F::kBlockElements;
#pragma unroll
    for (int g = 0; g < F::kGroups; ++g) {
      float4 w[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) w[r] = F::decode(unit[r], g);
      const std::int64_t column = block_column + F::group_column(sub, g);
      if (norm) {
#pragma unroll
        for (int r = 0; r < kRows; ++r) w[r] = times_norm_weight(w[r], a.norm_weight, column);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const float4 v = __ldcg(reinterpret_cast<const float4*>(x + b * a.columns + column));
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          float& s = acc[r * kBatch + b];
          s = __fmaf_rn(w[r].x, v.x, s);
          s = __fmaf_rn(w[r].y, v.y, s);
          s = __fmaf_rn(w[r].z, v.z, s);
          s = __fmaf_rn(w[r].w, v.w, s);
        }
      }
    }
  }
  double squares[kBatch];
#pragma unroll
  for (int b = 0; b < kBatch; ++b) squares[b] = 0.0;
  if (norm) sum_squares<F, kBatch>(a, x, units, index, group_threads, squares);
  finish_rows<kRows, kBatch>(a, acc, squares, group_threads, block_row, batch0, kBatch);
}

// Threads per row group. Few units per row leave most of a 128-thread group idle; on a small
// matrix that costs nothing (it is latency-bound, and the widest group needs the fewest rounds
// of loads), but on a tall one (an output projection of 50k rows x 576 columns) it starves the
// memory system, so there several narrower groups share a thread block.
__host__ __device__ inline int group_threads_for(int units, std::int64_t rows) {
  if (rows < 8192 || units > 96) return 128;
  return units > 48 ? 64 : 32;
}

// Thread blocks of one gemv_units launch over `rows` weight rows (one group of activation rows).
template <int kRows>
__host__ __device__ inline std::int64_t gemv_row_blocks(std::int64_t rows, int group_threads) {
  const std::int64_t rows_per_block = static_cast<std::int64_t>(kThreads / group_threads) * kRows;
  return (rows + rows_per_block - 1) / rows_per_block;
}

inline bool aligned(const void* p, std::size_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

// True when the unit loads of F may read `w`: alignment, and a whole number of units per row.
template <typename F>
bool units_fit(const DeviceWeight& w) {
  return aligned(w.data, F::kDataAlign) && w.row_bytes % F::kRowAlign == 0 &&
         w.columns % F::kBlockElements == 0 &&
         w.columns / F::kBlockElements * F::kUnitsPerBlock <= INT_MAX;
}

}  // namespace lpx::kernels::cuda::gemv_kernels
