#include "device_matmul.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include <lpx/kinds/tensor.h>

#include "cuda_check.hpp"

namespace lpx::cuda_backend {
namespace {

namespace k = kernels::cuda;

// Dequantized weight chunks stay under 64 MiB of f32.
constexpr std::int64_t kChunkElements = std::int64_t{16} << 20;
constexpr std::size_t kCublasWorkspaceBytes = std::size_t{32} << 20;

// Rows per chunk: a multiple of 64 (aligned output columns for cuBLAS), at least 64.
std::int64_t chunk_rows_for(std::int64_t max_columns, std::int64_t max_weight_rows) {
  const std::int64_t rows = kChunkElements / std::max<std::int64_t>(max_columns, 1) / 64 * 64;
  return std::clamp<std::int64_t>(rows, 64, std::max<std::int64_t>(max_weight_rows, 64));
}

}  // namespace

std::size_t DeviceMatmul::planned_bytes(int max_rows, std::int64_t max_columns,
                                        std::int64_t max_weight_rows) {
  if (max_rows <= kGemvRows) return 0;
  return static_cast<std::size_t>(chunk_rows_for(max_columns, max_weight_rows) * max_columns) *
             sizeof(float) +
         static_cast<std::size_t>(max_weight_rows) * sizeof(std::int32_t) + kCublasWorkspaceBytes;
}

DeviceMatmul::DeviceMatmul(cudaStream_t stream, int max_rows, std::int64_t max_columns,
                           std::int64_t max_weight_rows)
    : stream_(stream), chunk_rows_(chunk_rows_for(max_columns, max_weight_rows)) {
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // Exact f32 products (no TF32): the contract is f32 arithmetic.
  check_cublas(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (max_rows > kGemvRows) {
    w32_ = DeviceArray<float>(static_cast<std::size_t>(chunk_rows_) * max_columns,
                              "dequantized weight chunk (f32)");
    std::vector<std::int32_t> ids(static_cast<std::size_t>(max_weight_rows));
    std::iota(ids.begin(), ids.end(), 0);
    row_ids_ = DeviceArray<std::int32_t>(ids.size(), "weight row ids");
    check_cuda(cudaMemcpy(row_ids_.get(), ids.data(), ids.size() * sizeof(std::int32_t),
                          cudaMemcpyHostToDevice),
               "uploading weight row ids");
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

void DeviceMatmul::run_parts(const k::DeviceWeight& stack, std::span<const Part> parts,
                             const float* x, int rows) {
  if (stack.rows > 0 && rows <= kGemvRows && parts.size() <= k::kMaxGemvParts) {
    k::GemvOutput out;
    for (const Part& part : parts) out.parts[out.count++] = {part.y, part.weight->rows, part.bias};
    k::gemv(stack, x, out, rows, stream_);
    return;
  }
  for (const Part& part : parts) {
    run(*part.weight, x, part.y, rows);
    if (part.bias != nullptr) {
      k::add_bias(part.y, part.bias, rows, static_cast<int>(part.weight->rows), stream_);
    }
  }
}

// Column-major view for cuBLAS: W (rows x columns, row-major) is A = columns x rows with
// lda = columns; x is B = columns x batch; y is C = w.rows x batch with ldc = w.rows. So
// C = A^T B, chunk by chunk of weight rows (C's leading rows).
void DeviceMatmul::run_cublas(const k::DeviceWeight& w, const float* x, float* y, int rows) {
  const float one = 1.0f;
  const float zero = 0.0f;
  const auto columns = static_cast<int>(w.columns);
  const auto ldc = static_cast<int>(w.rows);
  for (std::int64_t begin = 0; begin < w.rows; begin += chunk_rows_) {
    const std::int64_t count = std::min(chunk_rows_, w.rows - begin);
    const float* a = nullptr;
    if (w.type == LPX_TENSOR_F32) {
      a = static_cast<const float*>(w.data) + begin * w.columns;  // already f32: no copy
    } else {
      k::embed_rows(w, row_ids_.get() + begin, static_cast<int>(count), w32_.get(), stream_);
      a = w32_.get();
    }
    check_cublas(cublasSgemm(cublas_, CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(count), rows,
                             columns, &one, a, columns, x, columns, &zero, y + begin, ldc),
                 "cublasSgemm");
  }
}

}  // namespace lpx::cuda_backend
