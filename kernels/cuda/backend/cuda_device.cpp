#include "cuda_device.hpp"

#include <cuda_runtime_api.h>

#include <cstdio>

#include <lpx/cpp/status.hpp>

#include "cuda/launch.hpp"

namespace lpx::cuda_backend {
namespace {

[[noreturn]] void unusable(const std::string& why) {
  throw lpx::Error(LPX_ERR_UNSUPPORTED, "CUDA is not usable: " + why +
                                            " (`lpx-pipeline doctor` checks the whole setup)");
}

// The reason cudaGetDeviceCount gave, in the user's terms.
[[noreturn]] void explain_device_count_error(cudaError_t error) {
  int runtime = 0;
  cudaRuntimeGetVersion(&runtime);
  int driver = 0;
  cudaDriverGetVersion(&driver);
  switch (error) {
    case cudaErrorInsufficientDriver:
      if (driver == 0) {
        unusable("no NVIDIA driver is installed or loaded (in a container: run it with --gpus "
                 "all and the NVIDIA Container Toolkit)");
      }
      unusable("the NVIDIA driver supports CUDA " + cuda_version_text(driver) +
               ", older than the CUDA " + cuda_version_text(runtime) +
               " runtime this plugin was built with; update the driver");
    case cudaErrorNoDevice:
      unusable("the driver sees no CUDA GPU (check CUDA_VISIBLE_DEVICES, and that the container "
               "was given the GPU)");
    default:
      unusable(std::string("cannot initialise the driver: ") + cudaGetErrorString(error) + " (" +
               cudaGetErrorName(error) + ")");
  }
}

}  // namespace

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string CudaDevice::describe() const {
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB", static_cast<double>(total_bytes) / (1 << 30));
  return name + " (cuda:" + std::to_string(index) + ", sm_" + std::to_string(major) +
         std::to_string(minor) + ", " + memory + ")";
}

CudaDevice open_cuda_device(int index) {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    explain_device_count_error(error);
  }
  if (count == 0) unusable("the driver sees no CUDA GPU");
  if (index < 0 || index >= count) {
    unusable("cuda:" + std::to_string(index) + " does not exist; this machine has " +
             std::to_string(count) + " GPU(s), cuda:0 to cuda:" + std::to_string(count - 1));
  }
  if (cudaError_t error = cudaSetDevice(index); error != cudaSuccess) {
    unusable("cudaSetDevice(" + std::to_string(index) + "): " + cudaGetErrorString(error));
  }
  cudaDeviceProp properties{};
  if (cudaError_t error = cudaGetDeviceProperties(&properties, index); error != cudaSuccess) {
    unusable(std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(error));
  }
  CudaDevice device;
  device.index = index;
  device.name = properties.name;
  device.major = properties.major;
  device.minor = properties.minor;
  device.multiprocessors = properties.multiProcessorCount;
  device.total_bytes = properties.totalGlobalMem;
  if (cudaError_t error = kernels::cuda::probe_kernel_image(); error != cudaSuccess) {
    cudaGetLastError();  // clear it
    if (error == cudaErrorNoKernelImageForDevice || error == cudaErrorInvalidDeviceFunction) {
      unusable("this build has no kernels for " + device.describe() +
               "; rebuild with -DLPX_CUDA_ARCHITECTURES=" + std::to_string(device.major) +
               std::to_string(device.minor));
    }
    unusable(device.describe() + ": " + cudaGetErrorString(error));
  }
  return device;
}

}  // namespace lpx::cuda_backend
