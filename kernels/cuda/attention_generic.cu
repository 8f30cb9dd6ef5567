// Attention for head sizes the flash-decoding kernels are not instantiated for (they cover 64,
// 80, 96, 128 and 256; tiny test models have 4 or 8). Correct for any head_dim up to 1024,
// not fast: one block per (row, query head), one thread per output dimension; every thread
// walks the row's positions with an online softmax, recomputing each score q.k itself (so the
// block needs no scratch and no synchronisation). Same arithmetic as attention.cu: q rounded
// to f16, f32 scores times scale, exp = the reference's exp_approx, f32 weights, the division
// last; a window and a soft cap as attention.cu applies them. The grid depends only on n_rows
// and n_heads, so a captured graph stays valid.
#include "cuda/attention_generic.cuh"
#include "cuda/device_math.cuh"
#include "cuda/elementwise_math.cuh"

#include <cmath>

namespace lpx::kernels::cuda::detail {
namespace {

constexpr int kMaxHeadDim = 1024;

__device__ float cache_value(const AttentionArgs& a, const std::uint16_t* pool,
                             const std::int32_t* table, int t, int kv_head, int d) {
  const auto block = static_cast<std::size_t>(table[t / a.block_size]);
  const std::size_t slot = block * a.block_size + t % a.block_size;
  const std::uint16_t bits = pool[(slot * a.n_kv_heads + kv_head) * a.head_dim + d];
  return __half2float(__ushort_as_half(bits));
}

__global__ void attention_any_head_dim_kernel(AttentionArgs a) {
  const int row = blockIdx.x;
  const int head = blockIdx.y;
  const int d = threadIdx.x;
  if (d >= a.head_dim) return;
  const int kv_head = head / (a.n_heads / a.n_kv_heads);
  const std::int32_t* table =
      a.block_tables + static_cast<std::size_t>(a.row_sequence[row]) * a.block_table_stride;
  const float* q = a.q + (static_cast<std::size_t>(row) * a.n_heads + head) * a.head_dim;
  const int last = a.positions[row];
  const int first = a.window <= 0 || last < a.window ? 0 : last - a.window + 1;
  float max = -INFINITY;
  float sum = 0.0f;
  float acc = 0.0f;
  for (int t = first; t <= last; ++t) {
    float score = 0.0f;
    for (int i = 0; i < a.head_dim; ++i) {
      score = fmaf(round_to_f16(q[i]), cache_value(a, a.k_pool, table, t, kv_head, i), score);
    }
    score = mul_rn(score, a.scale);
    if (a.softcap > 0.0f) score = soft_cap(score, a.softcap);
    if (score > max) {  // rescale what was summed under the old maximum (none at first)
      if (max != -INFINITY) {
        const float factor = exp_approx(sub_rn(max, score));
        sum = mul_rn(sum, factor);
        acc = mul_rn(acc, factor);
      }
      max = score;
    }
    const float w = exp_approx(sub_rn(score, max));
    sum = add_rn(sum, w);
    acc = fmaf(w, cache_value(a, a.v_pool, table, t, kv_head, d), acc);
  }
  a.out[(static_cast<std::size_t>(row) * a.n_heads + head) * a.head_dim + d] = div_rn(acc, sum);
}

}  // namespace

bool attention_any_head_dim_supports(int head_dim) noexcept {
  return head_dim > 0 && head_dim <= kMaxHeadDim;
}

void attention_any_head_dim(const AttentionArgs& a, cudaStream_t stream) {
  const int threads = (a.head_dim + 31) / 32 * 32;
  attention_any_head_dim_kernel<<<dim3(a.n_rows, a.n_heads), threads, 0, stream>>>(a);
}

}  // namespace lpx::kernels::cuda::detail
