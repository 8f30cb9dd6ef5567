// The per-op kernel entries of the quant-backend ABI (matmul, rms_norm, rope, swiglu,
// attention on host buffers) for the cuda backend: each call copies its operands to the GPU,
// runs the same kernel the device model runs, and copies the result back. The engine never
// uses them with this backend (it runs whole steps through model_load); they exist so tools
// and the kernel conformance tests can hold the CUDA kernels to the CPU reference through the
// plugin's own table. Synchronous and slow by design. Scratch grows on demand.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include <lpx/kinds/quant_backend.h>

#include "device_memory.hpp"

namespace lpx::cuda_backend {

class HostOps {
 public:
  HostOps();
  ~HostOps();
  HostOps(const HostOps&) = delete;
  HostOps& operator=(const HostOps&) = delete;

  void matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch);
  void dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out);
  void rms_norm(const float* x, const float* weight, float* out, std::size_t rows, std::size_t n,
                float eps);
  void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
            const std::int32_t* positions, const lpx_rope_params& params);
  void swiglu(const float* gate, const float* up, float* out, std::size_t n);
  void geglu(const float* gate, const float* up, float* out, std::size_t n);
  void attention(const lpx_attention_args& args);

 private:
  // Device scratch slot `i` with at least `bytes` bytes.
  void* scratch(int i, std::size_t bytes);
  void* upload(int i, const void* host, std::size_t bytes);
  void download(void* host, const void* device, std::size_t bytes);

  static constexpr int kSlots = 9;
  cudaStream_t stream_ = nullptr;
  DeviceArray<std::uint8_t> slots_[kSlots];
};

}  // namespace lpx::cuda_backend
