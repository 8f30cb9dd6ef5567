// RoPE's arithmetic and the rope_and_store thread-block body (ops.cu has the precision notes),
// shared by ops.cu's kernels and the persistent decode kernel (decode_megakernel.cu). Private
// to kernels/cuda.
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "cuda/dependent_launch.cuh"
#include "cuda/device_math.cuh"
#include "cuda/elementwise_math.cuh"
#include "cuda/launch.hpp"
#include "lpx/kinds/quant_backend.h"

namespace lpx::kernels::cuda::rope_kernels {

using detail::div_rn;
using detail::mul_rn;

struct RopeShape {
  int pairs;  // n_rot / 2; 0 rotates nothing
  bool neox;
  float theta_scale, freq_scale;
  const float* freq_factors;
  float magnitude;  // attn_factor (1: none)
};

// Rotates dim pair i of `heads` consecutive heads of one row at `position`. theta_i = position *
// theta_scale^i is built by i successive f32 products, as the reference builds it (a pow per
// pair would round differently).
__device__ inline void rotate_pair(float* row, int heads, int head_dim, float position, int i,
                                   const RopeShape& r) {
  float theta = position;
  for (int k = 0; k < i; ++k) theta = mul_rn(theta, r.theta_scale);
  const float factor = r.freq_factors != nullptr ? r.freq_factors[i] : 1.0f;
  const float angle = mul_rn(r.freq_scale, div_rn(theta, factor));
  double sin_d = 0.0;
  double cos_d = 0.0;
  sincos(static_cast<double>(angle), &sin_d, &cos_d);
  auto c = static_cast<float>(cos_d);
  auto s = static_cast<float>(sin_d);
  if (r.magnitude != 1.0f) {  // the reference multiplies even by 1; that changes nothing
    c = mul_rn(c, r.magnitude);
    s = mul_rn(s, r.magnitude);
  }
  const int first = r.neox ? i : 2 * i;
  const int second = r.neox ? i + r.pairs : 2 * i + 1;
  for (int h = 0; h < heads; ++h) {
    float* head = row + static_cast<std::size_t>(h) * head_dim;
    const float x0 = head[first];
    const float x1 = head[second];
    head[first] = fmaf(x0, c, -mul_rn(x1, s));
    head[second] = fmaf(x0, s, mul_rn(x1, c));
  }
}

// RMS-normalises in place each of `heads` heads of head_dim values, a warp per head, as
// add_rms_norm_kernel normalises a row (squares in f32 summed in double, scale in f32).
__device__ inline void normalise_heads(float* row, int heads, int head_dim, const float* weight,
                                       float eps) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  for (int h = static_cast<int>(threadIdx.x) / 32; h < heads;
       h += static_cast<int>(blockDim.x) / 32) {
    float* head = row + static_cast<std::size_t>(h) * head_dim;
    double sum = 0.0;
    for (int i = lane; i < head_dim; i += 32) sum += static_cast<double>(mul_rn(head[i], head[i]));
    const float scale = detail::rms_scale(detail::warp_sum(sum), head_dim, eps);
    for (int i = lane; i < head_dim; i += 32) head[i] = mul_rn(mul_rn(head[i], scale), weight[i]);
  }
}

// The q/k norms and rope of one head of one row, and for a kv head its k and v into their KV
// slot as f16: the norms, rope() twice and kv_store() in one launch, with the same arithmetic
// (the pair's angle is computed for each head, as the separate launches compute it per row).
// One block per (row, head): blockIdx.y < q_heads is q head y, the rest are the kv heads, so a
// batch-1 step runs q_heads + kv_heads blocks instead of one.
// The body for thread block (row, head_block): blockIdx in ops.cu's kernel, a work item of the
// persistent decode kernel. Any block size: the loops stride by blockDim.
__device__ __forceinline__ void rope_store_block(const RopeStoreArgs& a, const RopeShape& r,
                                                 int row, int head_block) {
  detail::allow_next_kernel();  // launched as a dependent (dependent_launch.cuh)
  detail::wait_for_previous_kernel();
  const bool is_q = head_block < a.q_heads;
  const int head = is_q ? head_block : head_block - a.q_heads;
  const auto position = static_cast<float>(a.positions[row]);
  const int kv_width = a.kv_heads * a.head_dim;
  const std::size_t head_offset = static_cast<std::size_t>(head) * a.head_dim;
  float* x = is_q ? a.q + static_cast<std::size_t>(row) * a.q_heads * a.head_dim + head_offset
                  : a.k + static_cast<std::size_t>(row) * kv_width + head_offset;
  const float* norm = is_q ? a.q_norm : a.k_norm;
  if (norm != nullptr) {
    normalise_heads(x, 1, a.head_dim, norm, a.norm_eps);
    __syncthreads();  // a pair's two dims were normalised by other lanes
  }
  for (int i = threadIdx.x; i < r.pairs; i += blockDim.x) {
    rotate_pair(x, 1, a.head_dim, position, i, r);
  }
  if (is_q) return;
  const std::int32_t slot = a.slots[row];
  if (slot < 0) return;  // stores nothing, as kv_store (no barrier follows)
  __syncthreads();       // every rotated k value written before it is stored
  const float* v = a.v + static_cast<std::size_t>(row) * kv_width + head_offset;
  const std::size_t base = static_cast<std::size_t>(slot) * kv_width + head_offset;
  for (int i = threadIdx.x; i < a.head_dim; i += blockDim.x) {
    a.k_pool[base + i] = detail::f32_to_f16_bits(x[i]);
    a.v_pool[base + i] = detail::f32_to_f16_bits(v[i]);
  }
}

// The rope arguments checked and turned into the kernels' shape; false when invalid.
inline bool rope_shape(const RopeArgs& args, int head_dim, RopeShape& shape) {
  const bool mode_known = args.mode == LPX_ROPE_NORMAL || args.mode == LPX_ROPE_NEOX;
  if (!mode_known || args.n_rot < 0 || args.n_rot % 2 != 0 || args.n_rot > head_dim) return false;
  // reference::rope_row's std::pow(float, float) is the C library's powf: the same bits here.
  shape.theta_scale =
      args.n_rot == 0 ? 1.0f : powf(args.freq_base, -2.0f / static_cast<float>(args.n_rot));
  shape.pairs = args.n_rot / 2;
  shape.neox = args.mode == LPX_ROPE_NEOX;
  shape.freq_scale = args.freq_scale;
  shape.freq_factors = args.freq_factors;
  shape.magnitude = args.attn_factor != 0.0f ? args.attn_factor : 1.0f;
  return true;
}

// The arguments rope_and_store() launches its kernel for, turned into `shape`: checked by it at
// each launch and by the persistent kernel once at load.
inline bool rope_store_valid(const RopeStoreArgs& a, const RopeArgs& args, RopeShape& shape) {
  return a.q_heads > 0 && a.kv_heads > 0 && a.head_dim > 0 &&
         a.q_heads + a.kv_heads <= 65535 &&  // gridDim.y
         rope_shape(args, a.head_dim, shape);
}

}  // namespace lpx::kernels::cuda::rope_kernels
