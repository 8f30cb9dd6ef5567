#include "device_matmul.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include <lpx/kinds/tensor.h>

#include <lpx/cpp/status.hpp>

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

// Rows [first, first + rows) of w as a weight of their own.
k::DeviceWeight row_range(const k::DeviceWeight& w, std::int64_t first, std::int64_t rows) {
  k::DeviceWeight part = w;
  part.data = static_cast<const std::uint8_t*>(w.data) + static_cast<std::size_t>(first) * w.row_bytes;
  part.rows = rows;
  return part;
}

}  // namespace

std::size_t DeviceMatmul::planned_bytes(const Limits& l) {
  if (l.rows <= kGemvRows) return 0;
  const auto rows = static_cast<std::size_t>(l.rows);
  return static_cast<std::size_t>(chunk_rows_for(l.columns, l.weight_rows) * l.columns) *
             sizeof(float) +
         static_cast<std::size_t>(l.weight_rows) * sizeof(std::int32_t) + kCublasWorkspaceBytes +
         rows * static_cast<std::size_t>(l.columns + l.staged_rows) * sizeof(float);
}

DeviceMatmul::DeviceMatmul(cudaStream_t stream, const Limits& l)
    : stream_(stream), chunk_rows_(chunk_rows_for(l.columns, l.weight_rows)) {
  check_cublas(cublasCreate(&cublas_), "cublasCreate");
  check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
  // Exact f32 products (no TF32): the contract is f32 arithmetic.
  check_cublas(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  if (l.rows > kGemvRows) {
    w32_ = DeviceArray<float>(static_cast<std::size_t>(chunk_rows_) * l.columns,
                              "dequantized weight chunk (f32)");
    std::vector<std::int32_t> ids(static_cast<std::size_t>(l.weight_rows));
    std::iota(ids.begin(), ids.end(), 0);
    row_ids_ = DeviceArray<std::int32_t>(ids.size(), "weight row ids");
    check_cuda(cudaMemcpy(row_ids_.get(), ids.data(), ids.size() * sizeof(std::int32_t),
                          cudaMemcpyHostToDevice),
               "uploading weight row ids");
    cublas_workspace_ = DeviceArray<std::uint8_t>(kCublasWorkspaceBytes, "cuBLAS workspace");
    check_cublas(cublasSetWorkspace(cublas_, cublas_workspace_.get(), cublas_workspace_.bytes()),
                 "cublasSetWorkspace");
    const auto rows = static_cast<std::size_t>(l.rows);
    normed_ = DeviceArray<float>(rows * static_cast<std::size_t>(l.columns), "normalised rows");
    if (l.staged_rows > 0) {
      staged_ = DeviceArray<float>(rows * static_cast<std::size_t>(l.staged_rows), "products");
    }
  }
}

DeviceMatmul::~DeviceMatmul() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
}

void DeviceMatmul::run(const k::DeviceWeight& w, const float* x, float* y, int rows) {
  run(w, k::GemvInput{x}, k::single_gemv_output(y, w.rows), rows);
}

void DeviceMatmul::run(const k::DeviceWeight& w, const k::GemvInput& in,
                       const k::GemvOutput& out, int rows) {
  if (rows <= kGemvRows) {
    k::gemv(w, in, out, rows, stream_);  // every fusion in one launch per 8 rows
    return;
  }
  if (out.argmax_keys != nullptr) {  // the model asks for it only up to kGemvRows rows
    throw lpx::Error(LPX_ERR_INTERNAL, "a fused argmax takes at most " +
                                           std::to_string(kGemvRows) + " rows, not " +
                                           std::to_string(rows));
  }
  const float* x = in.x;
  if (in.norm_weight != nullptr) {
    k::rms_norm(in.x, in.norm_weight, normed_.get(), rows, static_cast<int>(w.columns),
                in.norm_eps, stream_);
    x = normed_.get();
  }
  if (k::stores_pairs(out.store)) {
    const k::GemvPart& part = out.parts[0];
    run_cublas(w, x, staged_.get(), rows);
    if (out.store == k::GemvStore::kGegluPairs) {
      k::geglu_pairs(staged_.get(), part.y, rows, static_cast<int>(part.rows), stream_);
    } else {
      k::swiglu_pairs(staged_.get(), part.y, rows, static_cast<int>(part.rows), stream_);
    }
    return;
  }
  std::int64_t first = 0;
  for (int p = 0; p < out.count; ++p) {
    const k::GemvPart& part = out.parts[p];
    const k::DeviceWeight weight = row_range(w, first, part.rows);
    first += part.rows;
    const auto width = static_cast<int>(part.rows);
    float* product = out.store == k::GemvStore::kAccumulate ? staged_.get() : part.y;
    run_cublas(weight, x, product, rows);
    if (part.bias != nullptr) k::add_bias(product, part.bias, rows, width, stream_);
    k::scale_and_cap(product, static_cast<std::size_t>(rows) * width, out.scale, out.softcap,
                     stream_);  // nothing unless set
    if (product != part.y) {
      k::add_in_place(part.y, product, static_cast<std::size_t>(rows) * width, stream_);
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
