// Exact dequantization of weight rows by units (gemv.cu's dequantize_units kernel: embeddings,
// the cuBLAS path's chunks), its thread body shared with the persistent decode kernel
// (decode_megakernel.cu), which dequantizes a step's embedding row with it. Private to
// kernels/cuda.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "cuda/quant_blocks.cuh"

namespace lpx::kernels::cuda::dequantize_kernels {

namespace q = quant;

// Output row i of a dequantization is weight row tokens[i], or row_begin + i without tokens;
// a token outside [0, rows) gives a row of NaN.
struct RowSource {
  const std::int32_t* tokens;
  std::int64_t row_begin;
  std::int64_t rows;  // of the weight
  // With tokens: a token -(o + 1) is previous_picks[o], the pick a queued step left on the
  // device for the step behind it (NULL: such a token is out of range). Not __ldg: the picks
  // are written by the step before, in the same stream.
  const std::int32_t* previous_picks = nullptr;
  __device__ std::int64_t operator()(std::int64_t i) const {
    if (tokens == nullptr) return row_begin + i;
    std::int64_t token = __ldg(tokens + i);
    if (token < 0 && previous_picks != nullptr) token = previous_picks[-token - 1];
    return token >= 0 && token < rows ? token : -1;
  }
};

__device__ __forceinline__ void store_value(float* p, float v) { *p = v; }
__device__ __forceinline__ void store_value(__half* p, float v) {
  *p = __ushort_as_half(q::f32_to_f16_bits(v));
}
__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
__device__ __forceinline__ void store4(__half* p, float4 v) {  // p is 8-aligned
  const std::uint32_t lo = q::f32_to_f16_bits(v.x) | (std::uint32_t{q::f32_to_f16_bits(v.y)} << 16);
  const std::uint32_t hi = q::f32_to_f16_bits(v.z) | (std::uint32_t{q::f32_to_f16_bits(v.w)} << 16);
  *reinterpret_cast<uint2*>(p) = make_uint2(lo, hi);
}

struct DequantArgs {
  const std::uint8_t* data;
  std::size_t row_bytes;
  std::int64_t columns;
  RowSource source;
  std::int64_t out_rows;
};

// Threads `thread`, `thread + threads`, ... of a grid-stride loop, one unit of an output row
// each; out is 16-aligned, columns a whole number of units.
template <typename F, typename Out>
__device__ __forceinline__ void dequantize_units_body(const DequantArgs& a, int units, Out* out,
                                                      std::int64_t thread,
                                                      std::int64_t threads) {
  const std::int64_t total = a.out_rows * units;
  for (std::int64_t i = thread; i < total; i += threads) {
    const std::int64_t out_row = i / units;
    const int u = static_cast<int>(i % units);
    const int block = u / F::kUnitsPerBlock, sub = u % F::kUnitsPerBlock;
    Out* o = out + out_row * a.columns + static_cast<std::int64_t>(block) * F::kBlockElements;
    const std::int64_t row = a.source(out_row);
    if (row < 0) {
      const float nan = __uint_as_float(0x7FC00000u);
#pragma unroll
      for (int g = 0; g < F::kGroups; ++g) {
        store4(o + F::group_column(sub, g), make_float4(nan, nan, nan, nan));
      }
      continue;
    }
    const typename F::Unit unit = F::load(a.data + static_cast<std::size_t>(row) * a.row_bytes +
                                              static_cast<std::size_t>(block) * F::kBlockBytes,
                                          sub);
#pragma unroll
    for (int g = 0; g < F::kGroups; ++g) store4(o + F::group_column(sub, g), F::decode(unit, g));
  }
}

}  // namespace lpx::kernels::cuda::dequantize_kernels
