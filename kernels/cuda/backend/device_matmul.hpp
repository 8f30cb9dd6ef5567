// y = W x on the GPU for any number of activation rows. Decode-sized batches go to the GEMV
// kernels, which read each weight block once per 8 rows straight from its quantized layout
// (memory-bound: bytes of weights / bandwidth). Larger batches (prefill) dequantize W exactly
// to f32 in chunks of rows and call cuBLAS SGEMM: the f32-activation contract kept (no f16
// rounding of activations, which large models' outlier activations would overflow), at the
// price of f32 rather than tensor-core f16 throughput, ample for prefill of small models.
//
// Threading: one stream, one engine thread. run() does not allocate; it may be captured in a
// CUDA graph (cuBLAS has its own workspace set).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <span>

#include "cuda/launch.hpp"
#include "device_memory.hpp"

namespace lpx::cuda_backend {

class DeviceMatmul {
 public:
  // Rows up to which batches stay on the GEMV kernels (in groups of kMaxGemvBatch).
  static constexpr int kGemvRows = 64;

  // Scratch for up to `max_rows` activation rows of up to `max_columns` floats and weights of
  // up to `max_weight_rows` rows.
  DeviceMatmul(cudaStream_t stream, int max_rows, std::int64_t max_columns,
               std::int64_t max_weight_rows);
  ~DeviceMatmul();
  DeviceMatmul(const DeviceMatmul&) = delete;
  DeviceMatmul& operator=(const DeviceMatmul&) = delete;

  // y[b * w.rows + r] = sum_c W[r][c] x[b * w.columns + c], b < rows.
  void run(const kernels::cuda::DeviceWeight& w, const float* x, float* y, int rows);

  // One matrix of a set that reads the same input, its output and its bias (or null).
  struct Part {
    const kernels::cuda::DeviceWeight* weight;
    float* y;
    const float* bias;
  };
  // Every part's y = W x (+ bias). `stack` is the parts stacked by rows (DeviceWeights' wqkv,
  // ffn_gate_up), or has rows == 0: decode-sized batches then take one GEMV launch over the
  // stack; otherwise (or without a stack) each part runs on its own, its bias added after.
  void run_parts(const kernels::cuda::DeviceWeight& stack, std::span<const Part> parts,
                 const float* x, int rows);

  std::size_t workspace_bytes() const noexcept {
    return w32_.bytes() + row_ids_.bytes() + cublas_workspace_.bytes();
  }
  // Bytes the constructor allocates for these limits (for the memory plan).
  static std::size_t planned_bytes(int max_rows, std::int64_t max_columns,
                                   std::int64_t max_weight_rows);

 private:
  void run_cublas(const kernels::cuda::DeviceWeight& w, const float* x, float* y, int rows);

  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  std::int64_t chunk_rows_;            // weight rows dequantized per cuBLAS call
  DeviceArray<float> w32_;             // one chunk of dequantized weight rows
  DeviceArray<std::int32_t> row_ids_;  // 0, 1, 2...: embed_rows dequantizes rows by id
  DeviceArray<std::uint8_t> cublas_workspace_;
};

}  // namespace lpx::cuda_backend
