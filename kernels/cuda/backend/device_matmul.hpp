// y = W x on the GPU for any number of activation rows, with the gemv family's fusions (a
// normalised input; outputs written, added to the residual stream, or paired into SwiGLU or
// GeGLU).
// Decode-sized batches (up to kGemvRows) go to the GEMV kernels, which read the weights
// straight from their quantized layout about once per call (memory-bound: bytes of weights /
// bandwidth; groups of 8 rows share each decoded weight, groups share it through L2) and fuse
// everything into one launch. Larger batches (prefill) normalise the input into scratch,
// dequantize W exactly to f32 in chunks of rows and call cuBLAS SGEMM, then apply the store:
// the f32-activation contract kept (no f16 rounding of activations, which large models'
// outlier activations would overflow), at the price of f32 rather than tensor-core f16
// throughput, ample for prefill of small models.
//
// Threading: one stream, one engine thread. run() does not allocate; it may be captured in a
// CUDA graph (cuBLAS has its own workspace set).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/launch.hpp"
#include "device_memory.hpp"

namespace lpx::cuda_backend {

class DeviceMatmul {
 public:
  // Rows up to which batches stay on the GEMV kernels (one launch, groups of kMaxGemvBatch).
  static constexpr int kGemvRows = 64;

  // The largest call the scratch must serve.
  struct Limits {
    int rows = 0;                  // activation rows
    std::int64_t columns = 0;      // input width
    std::int64_t weight_rows = 0;  // rows of a weight
    std::int64_t staged_rows = 0;  // rows of a weight whose products are added or paired
  };
  explicit DeviceMatmul(cudaStream_t stream, const Limits& limits);
  ~DeviceMatmul();
  DeviceMatmul(const DeviceMatmul&) = delete;
  DeviceMatmul& operator=(const DeviceMatmul&) = delete;

  // The products of W (possibly a stack of parts) with `rows` rows of `in`, stored as `out`
  // says (launch.hpp's GemvInput / GemvOutput, for any number of rows).
  void run(const kernels::cuda::DeviceWeight& w, const kernels::cuda::GemvInput& in,
           const kernels::cuda::GemvOutput& out, int rows);
  // y[b * w.rows + r] = sum_c W[r][c] x[b * w.columns + c], b < rows.
  void run(const kernels::cuda::DeviceWeight& w, const float* x, float* y, int rows);

  std::size_t workspace_bytes() const noexcept {
    return w32_.bytes() + row_ids_.bytes() + cublas_workspace_.bytes() + normed_.bytes() +
           staged_.bytes();
  }
  // Bytes the constructor allocates for these limits (for the memory plan).
  static std::size_t planned_bytes(const Limits& limits);

 private:
  // y = W x by cuBLAS, for a weight's rows [0, w.rows) (y rows of w.rows floats).
  void run_cublas(const kernels::cuda::DeviceWeight& w, const float* x, float* y, int rows);

  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  std::int64_t chunk_rows_;            // weight rows dequantized per cuBLAS call
  DeviceArray<float> w32_;             // one chunk of dequantized weight rows
  DeviceArray<std::int32_t> row_ids_;  // 0, 1, 2...: embed_rows dequantizes rows by id
  DeviceArray<std::uint8_t> cublas_workspace_;
  DeviceArray<float> normed_;          // the normalised input of a cuBLAS call
  DeviceArray<float> staged_;          // products waiting to be added or paired
};

}  // namespace lpx::cuda_backend
