// Owned device and pinned-host allocations. Every allocation happens at model load (or when a
// host-memory kernel entry first needs room); the decode step itself never allocates.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cuda_check.hpp"

namespace lpx::cuda_backend {

// `count` elements of T in device memory (uninitialised). Move-only.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  // `what` names the buffer in the out-of-memory message.
  DeviceArray(std::size_t count, const std::string& what) : count_(count) {
    if (count == 0) return;
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, count * sizeof(T)),
               "cudaMalloc of " + what + " (" + mebibytes(count * sizeof(T)) + ")");
    data_ = static_cast<T*>(p);
  }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~DeviceArray() {
    if (data_ != nullptr) cudaFree(data_);
  }

  T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

  static std::string mebibytes(std::size_t bytes) {
    return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
  }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// `count` elements of T in page-locked host memory: the staging area of each step's inputs
// and outputs, so copies are true asynchronous DMA.
template <class T>
class PinnedArray {
 public:
  PinnedArray() = default;
  PinnedArray(std::size_t count, const std::string& what) : count_(count) {
    if (count == 0) return;
    void* p = nullptr;
    check_cuda(cudaMallocHost(&p, count * sizeof(T)), "cudaMallocHost of " + what);
    data_ = static_cast<T*>(p);
  }
  PinnedArray(PinnedArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), count_(std::exchange(other.count_, 0)) {}
  PinnedArray& operator=(PinnedArray&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  ~PinnedArray() {
    if (data_ != nullptr) cudaFreeHost(data_);
  }

  T* get() const noexcept { return data_; }
  std::size_t size() const noexcept { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

// An owned non-blocking stream.
class CudaStream {
 public:
  CudaStream() {
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~CudaStream() {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// An owned event without timing: where a queued step's work ends on its stream.
class CudaEvent {
 public:
  CudaEvent() {
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

}  // namespace lpx::cuda_backend
