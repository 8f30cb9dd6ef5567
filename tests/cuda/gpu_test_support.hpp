// Shared helpers of the CUDA tests: skip cleanly where no GPU is usable, and a small RAII
// device buffer. Kept tiny and stable: other tests in tests/cuda include it.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace lpx::test {

// True where a GPU must be usable (LPX_EXPECT_GPU set and not "0": tools/gpu-check.sh sets it),
// so that a GPU test fails instead of skipping when the driver or the device is broken.
inline bool gpu_expected() {
  const char* value = std::getenv("LPX_EXPECT_GPU");
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

// True when at least one CUDA device can be used; otherwise false with the reason in *why.
inline bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why != nullptr) *why = cudaGetErrorString(err);
    (void)cudaGetLastError();  // clear the error state so later calls start clean
    return false;
  }
  if (count <= 0) {
    if (why != nullptr) *why = "no CUDA device found";
    return false;
  }
  return true;
}

// Owns `size` elements of T in device memory. Move-only.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size) : size_(size) {
    if (size_ != 0 &&
        cudaMalloc(reinterpret_cast<void**>(&data_), size_ * sizeof(T)) != cudaSuccess) {
      data_ = nullptr;
      size_ = 0;
      throw std::runtime_error("cudaMalloc failed");
    }
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  ~DeviceBuffer() {
    if (data_ != nullptr) (void)cudaFree(data_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (data_ != nullptr) (void)cudaFree(data_);
      data_ = other.data_;
      size_ = other.size_;
      other.data_ = nullptr;
      other.size_ = 0;
    }
    return *this;
  }

  T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

  // Copies host into the buffer (host.size() must not exceed size()). Complete on the device
  // when it returns: a pageable cudaMemcpy may return before its DMA lands, and work on a
  // non-blocking stream does not wait for it.
  void upload(const std::vector<T>& host) {
    if (host.size() > size_) throw std::runtime_error("DeviceBuffer::upload: too many elements");
    if (host.empty()) return;
    if (cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice) !=
            cudaSuccess ||
        cudaDeviceSynchronize() != cudaSuccess) {
      throw std::runtime_error("cudaMemcpy to device failed");
    }
  }

  // Copies the whole buffer back to the host; synchronous (waits for prior work on the device).
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ != 0 &&
        cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
      throw std::runtime_error("cudaMemcpy to host failed");
    }
    return host;
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// Seeded normal floats (never all zero) for kernel inputs.
inline std::vector<float> normal(std::mt19937& rng, std::size_t n, float scale) {
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> values(n);
  for (float& v : values) v = dist(rng);
  if (n > 0 && values[0] == 0.0f) values[0] = scale;
  return values;
}

inline ::testing::AssertionResult cuda_ok(cudaError_t err) {
  if (err == cudaSuccess) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << cudaGetErrorName(err) << ": " << cudaGetErrorString(err);
}

// The device's queue drained: launch errors first, then execution errors.
inline ::testing::AssertionResult finished() {
  const cudaError_t launch = cudaGetLastError();
  return cuda_ok(launch != cudaSuccess ? launch : cudaDeviceSynchronize());
}

}  // namespace lpx::test

// Skips the current test (from inside a TEST body or SetUp) when no CUDA GPU is usable; fails
// it instead where one is expected (gpu_expected).
#define LPX_REQUIRE_GPU()                                         \
  do {                                                            \
    std::string lpx_gpu_why_;                                     \
    if (!::lpx::test::gpu_available(&lpx_gpu_why_)) {             \
      if (::lpx::test::gpu_expected()) {                          \
        FAIL() << "LPX_EXPECT_GPU is set but no CUDA GPU is usable: " << lpx_gpu_why_; \
      }                                                           \
      GTEST_SKIP() << "no usable CUDA GPU: " << lpx_gpu_why_;     \
    }                                                             \
  } while (false)
