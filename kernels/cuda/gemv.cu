// Quantized matrix-vector products and weight dequantization (launch.hpp, "gemv.cu" section).
//
// gemv is the decode hot path and memory-bound: every weight byte is read once per call, for all
// the batch's activation rows at once. Design:
//  - A row group of 32, 64 or 128 threads (one to four warps) computes kRows consecutive output
//    rows; a 128-thread block holds 128 / group threads of them. The group walks the rows' units
//    (quant_blocks.cuh: 16 weights of one block, fetched with a few coalesced loads; neighbouring
//    threads take neighbouring units, so a warp reads a contiguous stretch of each row).
//  - Each thread decodes a unit of each of its kRows rows to exact f32 weights four columns at a
//    time, and multiplies them with 16-byte loads of the kBatch activation rows: a weight is
//    decoded once for the whole batch, an activation load serves kRows rows. Activations are
//    read through L2 (__ldcg), not the read-only path: with kernel overlap the kernel that
//    writes them may still be running when this one starts (it reads them only after waiting).
//  - Partial sums are f32 fma chains; warps reduce with shuffles, the group's warps through
//    shared memory, in a fixed order. The result of a row does not depend on the batch size nor
//    on the other rows of the batch (kRows changes with the batch, the per-row order does not).
//  - Batches above kMaxGemvBatch (8) run in one launch: each block serves one group of 8
//    activation rows, and the blocks of the same weight rows are consecutive in the grid, so
//    they run together and the weights come from DRAM about once (the others hit L2).
//  - The output head can apply the logit scale and soft cap and keep each activation row's
//    argmax as a 64-bit atomic maximum (argmax_key.cuh): a block reduces its keys in shared
//    memory and raises the row's key only when it beats the one already there.
//  - A weight may be several matrices stacked by rows (a layer's q, k and v): each part's rows
//    go to its own output buffer with its bias added (GemvOutput), so they cost one launch.
//  - Fusions that save whole launches of the decode step, at no extra pass over memory: the
//    input row may be RMS-normalised (the weights are multiplied by the norm weight as they are
//    decoded, the row's squares summed from L1 after the products and its scale applied to the
//    finished dot product), the output may be added to the residual stream, and
//    an interleaved gate/up weight may store SwiGLU of each gate/up pair (both rows of a pair
//    lie in one row group, as kRows is even).
// Data that does not meet the unit loads' alignment (quant_blocks.cuh), F32/F16/BF16 rows whose
// length is not a multiple of 8, and activations that are not 16-byte aligned take a plain
// per-element kernel with the same arithmetic per weight.
//
// Error bound: each output is the exact dot product of the exactly dequantized weights with x,
// up to f32 summation error. A thread's chain holds at most ceil(units / group) * 16 products;
// the reductions add 5 (warp) + 3 (group) additions, so |y - exact| <= k * 2^-24 * sum|w * x|
// (to first order) with k = 16 ceil(units / group) + 8 <= columns / 32 + 24 for every type and
// group size here (the per-element fallback: ceil(columns / 128) + 8). The CPU reference
// (matmul_f32.hpp) has its own bound of the same kind. With a normalised input the products
// take w * weight (one rounding) and the scale s multiplies the sum (one more), where norm-then-
// gemv rounds x * s and then * weight: |y - exact| <= (k + 3) * 2^-24 * sum|w * x * s * weight|.
// The scale itself equals add_rms_norm's unless the double sum of squares lies within
// columns * 2^-53 of an f32 rounding boundary of the mean (then one ulp apart).
#include <algorithm>
#include <climits>
#include <cstdint>

#include "cuda/dependent_launch.cuh"
#include "cuda/dequantize_block.cuh"
#include "cuda/elementwise_math.cuh"
#include "cuda/gemv_block.cuh"
#include "cuda/launch.hpp"
#include "cuda/quant_blocks.cuh"
#include "lpx/kinds/tensor.h"

namespace lpx::kernels::cuda {
namespace {

namespace q = quant;

using gemv_kernels::aligned;
using gemv_kernels::finish_rows;
using gemv_kernels::GemvArgs;
using gemv_kernels::group_threads_for;
using gemv_kernels::kThreads;
using gemv_kernels::units_fit;

// The fast kernel (gemv_block.cuh); the register budget: 64 for batches of 1 or 2 (8 blocks,
// 32 warps per SM, to keep many loads in flight), 128 above (the compiler uses them to hoist
// the activation loads). kGrouped: batch_groups groups of kBatch rows in one launch.
template <typename F, int kBatch, int kRows, bool kGrouped>
__global__ void __launch_bounds__(kThreads, kBatch <= 2 ? 8 : 4)
    gemv_units(GemvArgs a, int units, int group_threads, int batch_groups, int first_batch_row) {
  gemv_kernels::gemv_units_block<F, kBatch, kRows, kGrouped>(
      a, units, group_threads, batch_groups, first_batch_row, static_cast<int>(blockIdx.x));
}

// The fallback: kRows rows per block (2 for gate/up pairs, else 1), one weight at a time, any
// alignment, batch <= kMaxGemvBatch.
template <typename F, int kRows>
__global__ void __launch_bounds__(kThreads) gemv_elements(GemvArgs a, int batch) {
  detail::allow_next_kernel();
  detail::wait_for_previous_kernel();
  const std::int64_t block_row = static_cast<std::int64_t>(blockIdx.x) * kRows;
  const std::uint8_t* row[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const std::int64_t clamped = block_row + r < a.rows ? block_row + r : a.rows - 1;
    row[r] = a.data + static_cast<std::size_t>(clamped) * a.row_bytes;
  }
  float acc[kRows * kMaxGemvBatch];
#pragma unroll
  for (int i = 0; i < kRows * kMaxGemvBatch; ++i) acc[i] = 0.0f;
  double squares[kMaxGemvBatch];
#pragma unroll
  for (int b = 0; b < kMaxGemvBatch; ++b) squares[b] = 0.0;
  for (std::int64_t c = threadIdx.x; c < a.columns; c += kThreads) {
    float w[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) w[r] = F::element(row[r], c);
    if (a.norm_weight != nullptr) {
      const float g = __ldg(a.norm_weight + c);
#pragma unroll
      for (int r = 0; r < kRows; ++r) w[r] = __fmul_rn(w[r], g);
    }
#pragma unroll
    for (int b = 0; b < kMaxGemvBatch; ++b) {
      if (b >= batch) continue;
      const float v = __ldcg(a.x + b * a.columns + c);
      if (a.norm_weight != nullptr) squares[b] += static_cast<double>(__fmul_rn(v, v));
#pragma unroll
      for (int r = 0; r < kRows; ++r) {
        float& sum = acc[r * kMaxGemvBatch + b];
        sum = __fmaf_rn(w[r], v, sum);
      }
    }
  }
  finish_rows<kRows, kMaxGemvBatch>(a, acc, squares, kThreads, block_row, 0, batch);
}

// Activation rows first_batch_row .. + batch_groups * kBatch.
template <typename F, int kBatch>
void launch_gemv_units(const GemvArgs& a, int units, cudaStream_t stream, int batch_groups = 1,
                       int first_batch_row = 0) {
  constexpr int kRows = kBatch <= 2 ? 2 : 4;  // an activation load serves kRows rows; even, so
                                              // a gate/up pair never straddles two groups
  const int group_threads = group_threads_for(units, a.rows);
  const std::int64_t row_blocks = gemv_kernels::gemv_row_blocks<kRows>(a.rows, group_threads);
  const auto blocks = static_cast<unsigned>(row_blocks * batch_groups);
  if (batch_groups > 1 || first_batch_row > 0) {
    if constexpr (kBatch == kMaxGemvBatch) {  // whole groups: the grouped kernel
      detail::launch_dependent(gemv_units<F, kBatch, kRows, true>, dim3(blocks), dim3(kThreads),
                               stream, a, units, group_threads, batch_groups, first_batch_row);
      return;
    } else {  // the rest after whole groups: the plain kernel on offset pointers
      GemvArgs rest = a;
      rest.x += static_cast<std::int64_t>(first_batch_row) * a.columns;
      for (int p = 0; p < rest.out.count; ++p) {
        rest.out.parts[p].y += std::int64_t{first_batch_row} * rest.out.parts[p].rows;
      }
      if (rest.out.argmax_keys != nullptr) rest.out.argmax_keys += first_batch_row;
      detail::launch_dependent(gemv_units<F, kBatch, kRows, false>, dim3(blocks),
                               dim3(kThreads), stream, rest, units, group_threads, 1, 0);
      return;
    }
  }
  detail::launch_dependent(gemv_units<F, kBatch, kRows, false>, dim3(blocks), dim3(kThreads),
                           stream, a, units, group_threads, 1, 0);
}

template <typename F>
void gemv_with(const DeviceWeight& w, const GemvInput& in, const GemvOutput& out, int batch,
               cudaStream_t stream) {
  const GemvArgs a{static_cast<const std::uint8_t*>(w.data), w.row_bytes, w.rows, w.columns,
                   in.x, in.norm_weight, in.norm_eps, out};
  const bool vector_loads = units_fit<F>(w) && aligned(in.x, 16) && w.columns % 4 == 0 &&
                            (in.norm_weight == nullptr || aligned(in.norm_weight, 16));
  if (!vector_loads) {  // the fallback: groups of up to kMaxGemvBatch rows, one launch each
    for (int done = 0; done < batch; done += kMaxGemvBatch) {
      GemvArgs rows = a;
      rows.x += static_cast<std::int64_t>(done) * w.columns;
      for (int p = 0; p < out.count; ++p) {
        rows.out.parts[p].y += std::int64_t{done} * out.parts[p].rows;
      }
      if (out.argmax_keys != nullptr) rows.out.argmax_keys += done;
      const int n = std::min(kMaxGemvBatch, batch - done);
      if (stores_pairs(out.store)) {
        detail::launch_dependent(gemv_elements<F, 2>, dim3(static_cast<unsigned>(w.rows / 2)),
                                 dim3(kThreads), stream, rows, n);
      } else {
        detail::launch_dependent(gemv_elements<F, 1>, dim3(static_cast<unsigned>(w.rows)),
                                 dim3(kThreads), stream, rows, n);
      }
    }
    return;
  }
  const int units = static_cast<int>(w.columns / F::kBlockElements * F::kUnitsPerBlock);
  // Whole groups of kMaxGemvBatch rows in one launch, then the rest (batches of 9..64 take at
  // most two launches; the graph buckets 16, 32 and 64 one).
  const int groups = batch / kMaxGemvBatch;
  if (groups > 0) launch_gemv_units<F, kMaxGemvBatch>(a, units, stream, groups);
  const int done = groups * kMaxGemvBatch;
  switch (batch - done) {
    case 0: break;
    case 1: launch_gemv_units<F, 1>(a, units, stream, 1, done); break;
    case 2: launch_gemv_units<F, 2>(a, units, stream, 1, done); break;
    case 3: launch_gemv_units<F, 3>(a, units, stream, 1, done); break;
    case 4: launch_gemv_units<F, 4>(a, units, stream, 1, done); break;
    case 5: launch_gemv_units<F, 5>(a, units, stream, 1, done); break;
    case 6: launch_gemv_units<F, 6>(a, units, stream, 1, done); break;
    default: launch_gemv_units<F, 7>(a, units, stream, 1, done); break;
  }
}

// Calls fn(Format{}) for the format struct of `type`; false when gemv does not support it.
template <typename Fn>
bool with_format(std::int32_t type, Fn&& fn) {
  switch (type) {
    case LPX_TENSOR_F32: fn(q::F32{}); return true;
    case LPX_TENSOR_F16: fn(q::F16{}); return true;
    case LPX_TENSOR_BF16: fn(q::BF16{}); return true;
    case LPX_TENSOR_Q8_0: fn(q::Q8_0{}); return true;
    case LPX_TENSOR_Q4_0: fn(q::Q4_0{}); return true;
    case LPX_TENSOR_Q4_1: fn(q::Q4_1{}); return true;
    case LPX_TENSOR_Q5_0: fn(q::Q5_0{}); return true;
    case LPX_TENSOR_Q4_K: fn(q::Q4_K{}); return true;
    case LPX_TENSOR_Q6_K: fn(q::Q6_K{}); return true;
    default: return false;
  }
}

// ---- dequantization ------------------------------------------------------------------------

using dequantize_kernels::DequantArgs;
using dequantize_kernels::RowSource;
using dequantize_kernels::store_value;

// One thread per unit of an output row (dequantize_block.cuh); out is 16-aligned, columns a
// whole number of units. The dequantization kernels are launched plainly (they wait for
// everything before them) but let the next kernel launch early: after the embedding, the
// first layer's GEMV starts asking L2 for its weights while the rows are still being written.
template <typename F, typename Out>
__global__ void __launch_bounds__(kThreads) dequantize_units(DequantArgs a, int units, Out* out) {
  detail::allow_next_kernel();
  dequantize_kernels::dequantize_units_body<F>(
      a, units, out, blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x,
      static_cast<std::int64_t>(gridDim.x) * kThreads);
}

// One thread per element; any alignment, any columns.
template <typename F, typename Out>
__global__ void __launch_bounds__(kThreads) dequantize_elements(DequantArgs a, Out* out) {
  detail::allow_next_kernel();
  const std::int64_t total = a.out_rows * a.columns;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; i < total;
       i += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const std::int64_t out_row = i / a.columns, c = i % a.columns;
    const std::int64_t row = a.source(out_row);
    const float v = row < 0 ? __uint_as_float(0x7FC00000u)
                            : F::element(a.data + static_cast<std::size_t>(row) * a.row_bytes, c);
    store_value(out + i, v);
  }
}

// Blocks for a grid-stride loop over `total` items: enough to fill the GPU, no more.
unsigned grid_for(std::int64_t total) {
  const std::int64_t blocks = (total + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::int64_t>(blocks, 1, 8192));
}

template <typename F, typename Out>
void dequantize_with(const DeviceWeight& w, const DequantArgs& a, Out* out, cudaStream_t stream) {
  if (units_fit<F>(w) && aligned(out, 16)) {
    const int units = static_cast<int>(w.columns / F::kBlockElements * F::kUnitsPerBlock);
    dequantize_units<F, Out><<<grid_for(a.out_rows * units), kThreads, 0, stream>>>(a, units, out);
  } else {
    dequantize_elements<F, Out><<<grid_for(a.out_rows * a.columns), kThreads, 0, stream>>>(a, out);
  }
}

__global__ void __launch_bounds__(kThreads)
    f32_to_f16_kernel(const float* x, __half* out, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * kThreads) {
    out[i] = __ushort_as_half(q::f32_to_f16_bits(__ldg(x + i)));
  }
}

}  // namespace

bool gemv_supports(std::int32_t type) noexcept {
  return with_format(type, [](auto) {});
}

void gemv(const DeviceWeight& w, const float* x, float* y, int batch, cudaStream_t stream) {
  gemv(w, GemvInput{x}, single_gemv_output(y, w.rows), batch, stream);
}

void gemv(const DeviceWeight& w, const float* x, const GemvOutput& out, int batch,
          cudaStream_t stream) {
  gemv(w, GemvInput{x}, out, batch, stream);
}

namespace {

// True when `out` describes outputs of w: parts whose rows add up to w.rows, or one gate/up
// pair part of w.rows / 2 rows without bias.
bool output_matches(const DeviceWeight& w, const GemvOutput& out) {
  if (stores_pairs(out.store)) {
    return out.count == 1 && w.rows % 2 == 0 && out.parts[0].rows == w.rows / 2 &&
           out.parts[0].bias == nullptr && out.scale == 1.0f && out.softcap <= 0.0f &&
           out.argmax_keys == nullptr;
  }
  if (out.argmax_keys != nullptr && (out.count != 1 || out.store != GemvStore::kWrite)) {
    return false;
  }
  std::int64_t rows = 0;
  for (int p = 0; p < out.count; ++p) rows += out.parts[p].rows;
  return rows == w.rows;
}

}  // namespace

// An unsupported type fills the outputs with NaN (all bits set), so a missed gemv_supports
// check shows; so do outputs that do not match the weight.
void gemv(const DeviceWeight& w, const GemvInput& in, const GemvOutput& out, int batch,
          cudaStream_t stream) {
  if (w.rows <= 0 || batch <= 0 || out.count <= 0 || out.count > kMaxGemvParts) return;
  const bool supported = output_matches(w, out) && with_format(w.type, [&](auto format) {
                           gemv_with<decltype(format)>(w, in, out, batch, stream);
                         });
  if (!supported) {
    for (int p = 0; p < out.count; ++p) {
      (void)cudaMemsetAsync(out.parts[p].y, 0xFF,
                            sizeof(float) * static_cast<std::size_t>(batch * out.parts[p].rows),
                            stream);
    }
  }
}

void dequantize_rows_f16(const DeviceWeight& w, std::int64_t row_begin, std::int64_t rows,
                         __half* out, cudaStream_t stream) {
  if (rows <= 0 || w.columns <= 0) return;
  const DequantArgs a{static_cast<const std::uint8_t*>(w.data), w.row_bytes, w.columns,
                      RowSource{nullptr, row_begin, w.rows}, rows};
  const bool supported = with_format(
      w.type, [&](auto format) { dequantize_with<decltype(format)>(w, a, out, stream); });
  if (!supported) {
    (void)cudaMemsetAsync(out, 0xFF, sizeof(__half) * static_cast<std::size_t>(rows * w.columns),
                          stream);
  }
}

void embed_rows(const DeviceWeight& w, const std::int32_t* tokens, int n, float* out,
                cudaStream_t stream) {
  embed_rows(w, tokens, nullptr, n, out, stream);
}

void embed_rows(const DeviceWeight& w, const std::int32_t* tokens,
                const std::int32_t* previous_picks, int n, float* out, cudaStream_t stream) {
  if (n <= 0 || w.columns <= 0) return;
  const DequantArgs a{static_cast<const std::uint8_t*>(w.data), w.row_bytes, w.columns,
                      RowSource{tokens, 0, w.rows, previous_picks}, n};
  const bool supported = with_format(
      w.type, [&](auto format) { dequantize_with<decltype(format)>(w, a, out, stream); });
  if (!supported) {
    (void)cudaMemsetAsync(out, 0xFF, sizeof(float) * static_cast<std::size_t>(n * w.columns),
                          stream);
  }
}

void f32_to_f16(const float* x, __half* out, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  f32_to_f16_kernel<<<grid_for(static_cast<std::int64_t>(n)), kThreads, 0, stream>>>(x, out, n);
}

}  // namespace lpx::kernels::cuda
