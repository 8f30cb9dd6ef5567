#include "device_matmul.hpp"

#include <algorithm>

#include <lpx/kinds/tensor.h>

#include "cuda_check.hpp"

namespace lpx::cuda_backend {
namespace {

namespace k = kernels::cuda;

// Dequantized weight chunks stay under 64 MiB of f16.
constexpr std::int64_t kChunkElements = std::int64_t{32} << 20;
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

}  // namespace

DeviceMatmul::DeviceMatmul(cudaStream_t stream, int max_rows, std::int64_t max_columns,
                           std::int64_t max_weight_rows)
    : stream_(stream),
      chunk_rows_(std::clamp<std::int64_t>(kChunkElements / std::max<std::int64_t>(max_columns, 1),
                                           256, std::max<std::int64_t>(max_weight_rows, 256))) {
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  if (max_rows > kGemvRows) {
    x16_ = DeviceArray<__half>(static_cast<std::size_t>(max_rows) * max_columns,
                               "prefill activations (f16)");
    w16_ = DeviceArray<__half>(static_cast<std::size_t>(chunk_rows_) * max_columns,
                               "dequantized weight chunk (f16)");
    cublas_workspace_ = DeviceArray<std::uint8_t>(kCublasWorkspaceBytes, "cuBLAS workspace");
    check_cublas(cublasSetWorkspace(cublas_, cublas_workspace_.get(), cublas_workspace_.bytes()),
                 "cublasSetWorkspace");
  }
}

DeviceMatmul::~DeviceMatmul() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
}

void DeviceMatmul::run(const k::DeviceWeight& w, const float* x, float* y, int rows) {
  if (rows <= kGemvRows) {
    for (int b = 0; b < rows; b += k::kMaxGemvBatch) {
      const int batch = std::min(k::kMaxGemvBatch, rows - b);
      k::gemv(w, x + static_cast<std::size_t>(b) * w.columns,
              y + static_cast<std::size_t>(b) * w.rows, batch, stream_);
    }
    return;
  }
  run_cublas(w, x, y, rows);
}

// Column-major view for cuBLAS: W (rows x columns, row-major) is A = columns x rows with
// lda = columns; x is B = columns x batch; y is C = w.rows x batch with ldc = w.rows. So
// C = A^T B, chunk by chunk of weight rows (C's leading rows).
void DeviceMatmul::run_cublas(const k::DeviceWeight& w, const float* x, float* y, int rows) {
  const float one = 1.0f;
  const float zero = 0.0f;
  const auto columns = static_cast<int>(w.columns);
  const auto ldc = static_cast<int>(w.rows);
  if (w.type == LPX_TENSOR_F32) {
    check_cublas(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, ldc, rows, columns, &one, w.data,
                              CUDA_R_32F, columns, x, CUDA_R_32F, columns, &zero, y, CUDA_R_32F,
                              ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (f32)");
    return;
  }
  k::f32_to_f16(x, x16_.get(), static_cast<std::size_t>(rows) * columns, stream_);
  for (std::int64_t begin = 0; begin < w.rows; begin += chunk_rows_) {
    const std::int64_t count = std::min(chunk_rows_, w.rows - begin);
    const __half* a = nullptr;
    if (w.type == LPX_TENSOR_F16) {
      a = static_cast<const __half*>(w.data) + begin * w.columns;  // already f16: no copy
    } else {
      k::dequantize_rows_f16(w, begin, count, w16_.get(), stream_);
      a = w16_.get();
    }
    check_cublas(cublasGemmEx(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(count), rows,
                              columns, &one, a, CUDA_R_16F, columns, x16_.get(), CUDA_R_16F,
                              columns, &zero, y + begin, CUDA_R_32F, ldc, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (f16)");
  }
}

}  // namespace lpx::cuda_backend
