// CUDA and cuBLAS results turned into lpx::Error with what was being done, so a failure reads
// "cudaMalloc of the KV cache (512.0 MiB): out of memory" instead of an error number.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <string>

#include <lpx/cpp/status.hpp>

namespace lpx::cuda_backend {

inline lpx_status_code code_of(cudaError_t error) noexcept {
  return error == cudaErrorMemoryAllocation ? LPX_ERR_OUT_OF_MEMORY : LPX_ERR_INTERNAL;
}

inline void check_cuda(cudaError_t error, const std::string& what) {
  if (error == cudaSuccess) return;
  throw lpx::Error(code_of(error), what + ": " + cudaGetErrorString(error) + " (" +
                                       cudaGetErrorName(error) + ")");
}

inline void check_cublas(cublasStatus_t status, const std::string& what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw lpx::Error(status == CUBLAS_STATUS_ALLOC_FAILED ? LPX_ERR_OUT_OF_MEMORY : LPX_ERR_INTERNAL,
                   what + ": " + cublasGetStatusString(status));
}

}  // namespace lpx::cuda_backend
