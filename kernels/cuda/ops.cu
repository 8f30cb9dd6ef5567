// Element-wise and row kernels of the decode step: residual add + RMSNorm, bias and residual
// adds, SwiGLU and rotary embedding. Each follows its kernels/reference counterpart rounding
// step by rounding step (through the _rn helpers of device_math.cuh, immune to fast-math
// flags); where a GPU cannot reproduce it exactly, the comment says how far it can drift:
//
//   add_rms_norm  squares in f32, summed in double (per thread, then a fixed-order tree), mean
//                 and scale in f32. Only the order of the double additions differs from the
//                 reference; the sum's relative error is below n * 2^-53, so the f32 mean (and
//                 with it every output) is bit-identical unless the exact sum lies that close to
//                 an f32 rounding boundary, and then it is one ulp off (outputs <= 2 ulp).
//   add_bias, add_in_place   one f32 addition per element: exact.
//   add_residual  the norm as add_rms_norm, then one f32 product (the scale) and one sum.
//   scale_and_cap, geglu, geglu_pairs, the attention soft cap   tanh in double rounded to f32
//                 (correctly rounded) where the reference calls tanhf: one ulp off glibc's for
//                 a few inputs; every other operation as the reference orders it.
//   swiglu, swiglu_pairs   silu via exp_approx for the whole groups of 8 (bit-exact with the
//                 reference);
//                 the n % 8 tail takes exp in double rounded to f32 (the correctly rounded f32
//                 exp) where the reference calls the C library's expf; glibc's differs from it
//                 by one ulp for ~0.06% of inputs.
//   rope, rope_and_store   theta built by the same chain of f32 products, theta_scale computed on the
//                 host by the same std::pow call; cos and sin in double rounded to f32 (correctly
//                 rounded) where the reference calls the C library's cosf/sinf, which glibc 2.36
//                 gets one ulp off for ~1% of angles: c and s may differ by one ulp. The q/k
//                 norms of rope_and_store are add_rms_norm's arithmetic over each head.
#include "cuda/launch.hpp"
#include "cuda/dependent_launch.cuh"
#include "cuda/device_math.cuh"
#include "cuda/elementwise_math.cuh"
#include "cuda/rope_block.cuh"
#include "lpx/kinds/quant_backend.h"

#include <algorithm>
#include <cmath>

namespace lpx::kernels::cuda {
namespace {

using detail::add_rn;
using detail::div_rn;
using detail::mul_rn;

constexpr int kNormThreads = 256;
constexpr int kNormWarps = kNormThreads / 32;
constexpr int kElementThreads = 256;
constexpr int kMaxElementBlocks = 4096;  // element-wise kernels loop over larger arrays
constexpr int kRopeThreads = 64;

// Blocks for an element-wise kernel over n elements: a function of n only (graph-safe).
unsigned element_blocks(std::size_t n) {
  const std::size_t blocks = (n + kElementThreads - 1) / kElementThreads;
  return static_cast<unsigned>(std::min<std::size_t>(blocks, kMaxElementBlocks));
}

// One block per row. Pass 1 adds the residual (writing x back) and sums the squares; pass 2
// scales. Each thread touches the same indices in both passes, so out may alias x.
__global__ void __launch_bounds__(kNormThreads)
    add_rms_norm_kernel(float* x, const float* residual, const float* weight, float* out, int n,
                        float eps) {
  const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * n;
  float* xr = x + row_offset;
  double sum = 0.0;
  for (int i = threadIdx.x; i < n; i += kNormThreads) {
    float v = xr[i];
    if (residual != nullptr) {
      v = add_rn(v, residual[row_offset + i]);
      xr[i] = v;
    }
    sum += static_cast<double>(mul_rn(v, v));
  }

  __shared__ double warp_sums[kNormWarps];
  sum = detail::warp_sum(sum);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  double total = 0.0;
  for (int w = 0; w < kNormWarps; ++w) total += warp_sums[w];  // same order in every thread

  const float scale = detail::rms_scale(total, n, eps);
  for (int i = threadIdx.x; i < n; i += kNormThreads) {
    out[row_offset + i] = mul_rn(mul_rn(xr[i], scale), weight[i]);
  }
}

// One block per row: x += scale * (y normalised, or y). The norm's squares are summed as
// add_rms_norm_kernel sums them.
__global__ void __launch_bounds__(kNormThreads)
    add_residual_kernel(float* x, const float* y, const float* weight, float scale, int n,
                        float eps) {
  const std::size_t row_offset = static_cast<std::size_t>(blockIdx.x) * n;
  const float* yr = y + row_offset;
  float* xr = x + row_offset;
  float norm = 1.0f;
  if (weight != nullptr) {
    double sum = 0.0;
    for (int i = threadIdx.x; i < n; i += kNormThreads) sum += static_cast<double>(mul_rn(yr[i], yr[i]));
    __shared__ double warp_sums[kNormWarps];
    sum = detail::warp_sum(sum);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
    __syncthreads();
    double total = 0.0;
    for (int w = 0; w < kNormWarps; ++w) total += warp_sums[w];
    norm = detail::rms_scale(total, n, eps);
  }
  for (int i = threadIdx.x; i < n; i += kNormThreads) {
    float v = weight != nullptr ? mul_rn(mul_rn(yr[i], norm), weight[i]) : yr[i];
    if (scale != 1.0f) v = mul_rn(v, scale);
    xr[i] = add_rn(xr[i], v);
  }
}

__global__ void scale_and_cap_kernel(float* x, std::size_t n, float scale, float softcap) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    float v = scale != 1.0f ? mul_rn(x[i], scale) : x[i];
    if (softcap > 0.0f) v = detail::soft_cap(v, softcap);
    x[i] = v;
  }
}

__global__ void add_bias_kernel(float* x, const float* bias, std::size_t total, int width) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    x[i] = add_rn(x[i], bias[i % static_cast<std::size_t>(width)]);
  }
}

__global__ void add_in_place_kernel(float* x, const float* y, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    x[i] = add_rn(x[i], y[i]);
  }
}

// Element i uses the approximation when it lies in the whole groups of 8 of the n elements,
// as reference::swiglu does for the same n. out may alias gate (same index read and written).
__global__ void swiglu_kernel(const float* gate, const float* up, float* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = detail::swiglu_element(gate[i], up[i], static_cast<long long>(i),
                                    static_cast<long long>(n));
  }
}

// Rows of 2n interleaved values (gate j at 2j, up j at 2j + 1) to rows of n: swiglu of each
// row's gate and up halves, element j of a row treated as reference::swiglu treats it for n.
__global__ void swiglu_pairs_kernel(const float* pairs, float* out, std::size_t total, int n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    const std::size_t j = i % static_cast<std::size_t>(n);
    const float* pair = pairs + 2 * i;  // row r's pairs start at 2 * r * n = 2 * (i - j)
    out[i] = detail::swiglu_element(pair[0], pair[1], static_cast<long long>(j), n);
  }
}

__global__ void geglu_kernel(const float* gate, const float* up, float* out, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = detail::geglu_element(gate[i], up[i]);
  }
}

__global__ void geglu_pairs_kernel(const float* pairs, float* out, std::size_t total) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < total; i += stride) {
    out[i] = detail::geglu_element(pairs[2 * i], pairs[2 * i + 1]);
  }
}

using rope_kernels::rope_shape;
using rope_kernels::RopeShape;
using rope_kernels::rotate_pair;

// One block per row; a thread per dim pair rotates that pair in every head.
__global__ void __launch_bounds__(kRopeThreads)
    rope_kernel(float* x, int heads, int head_dim, const std::int32_t* positions, RopeShape r) {
  const int row = blockIdx.x;
  const auto position = static_cast<float>(positions[row]);
  float* x_row = x + static_cast<std::size_t>(row) * heads * head_dim;
  for (int i = threadIdx.x; i < r.pairs; i += kRopeThreads) {
    rotate_pair(x_row, heads, head_dim, position, i, r);
  }
}

__global__ void __launch_bounds__(kRopeThreads)
    rope_store_kernel(RopeStoreArgs a, RopeShape r) {
  rope_kernels::rope_store_block(a, r, static_cast<int>(blockIdx.x),
                                 static_cast<int>(blockIdx.y));
}


}  // namespace

void add_rms_norm(float* x, const float* residual, const float* weight, float* out, int rows,
                  int n, float eps, cudaStream_t stream) {
  if (rows <= 0) return;
  if (n <= 0) {
    detail::report_invalid_arguments(stream);
    return;
  }
  add_rms_norm_kernel<<<rows, kNormThreads, 0, stream>>>(x, residual, weight, out, n, eps);
}

void rms_norm(const float* x, const float* weight, float* out, int rows, int n, float eps,
              cudaStream_t stream) {
  // Without a residual the kernel only reads x.
  add_rms_norm(const_cast<float*>(x), nullptr, weight, out, rows, n, eps, stream);
}

void add_bias(float* x, const float* bias, int rows, int width, cudaStream_t stream) {
  if (rows <= 0 || width <= 0) return;
  const std::size_t total = static_cast<std::size_t>(rows) * width;
  add_bias_kernel<<<element_blocks(total), kElementThreads, 0, stream>>>(x, bias, total, width);
}

void add_in_place(float* x, const float* y, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  add_in_place_kernel<<<element_blocks(n), kElementThreads, 0, stream>>>(x, y, n);
}

void swiglu(const float* gate, const float* up, float* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  swiglu_kernel<<<element_blocks(n), kElementThreads, 0, stream>>>(gate, up, out, n);
}

void swiglu_pairs(const float* pairs, float* out, int rows, int n, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  swiglu_pairs_kernel<<<element_blocks(total), kElementThreads, 0, stream>>>(pairs, out, total, n);
}

void geglu(const float* gate, const float* up, float* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  geglu_kernel<<<element_blocks(n), kElementThreads, 0, stream>>>(gate, up, out, n);
}

void geglu_pairs(const float* pairs, float* out, int rows, int n, cudaStream_t stream) {
  if (rows <= 0 || n <= 0) return;
  const std::size_t total = static_cast<std::size_t>(rows) * n;
  geglu_pairs_kernel<<<element_blocks(total), kElementThreads, 0, stream>>>(pairs, out, total);
}

void add_residual(float* x, const float* y, const float* norm_weight, float scale, int rows,
                  int n, float eps, cudaStream_t stream) {
  if (rows <= 0) return;
  if (n <= 0) {
    detail::report_invalid_arguments(stream);
    return;
  }
  add_residual_kernel<<<rows, kNormThreads, 0, stream>>>(x, y, norm_weight, scale, n, eps);
}

void scale_and_cap(float* x, std::size_t n, float scale, float softcap, cudaStream_t stream) {
  if (n == 0 || (scale == 1.0f && softcap <= 0.0f)) return;
  scale_and_cap_kernel<<<element_blocks(n), kElementThreads, 0, stream>>>(x, n, scale, softcap);
}

void rope(float* x, int rows, int heads, int head_dim, const std::int32_t* positions,
          const RopeArgs& args, cudaStream_t stream) {
  if (rows <= 0 || heads <= 0 || args.n_rot == 0) return;
  RopeShape shape{};
  if (!rope_shape(args, head_dim, shape)) {
    detail::report_invalid_arguments(stream);
    return;
  }
  rope_kernel<<<rows, kRopeThreads, 0, stream>>>(x, heads, head_dim, positions, shape);
}

void rope_and_store(const RopeStoreArgs& a, const RopeArgs& args, cudaStream_t stream) {
  if (a.rows <= 0) return;
  RopeShape shape{};
  if (!rope_kernels::rope_store_valid(a, args, shape)) {
    detail::report_invalid_arguments(stream);
    return;
  }
  detail::launch_dependent(rope_store_kernel, dim3(a.rows, a.q_heads + a.kv_heads),
                           dim3(kRopeThreads), stream, a, shape);
}

}  // namespace lpx::kernels::cuda
