// The few CUDA driver API entry points LPX's GPU checks need, loaded from libcuda.so.1 with
// dlopen at run time. Nothing here includes cuda.h or links against the driver, so the core
// builds and runs on machines without CUDA; the types below are ABI-identical to cuda.h's.
//
// Thread safety: a loaded CudaDriver is immutable; the driver API itself is thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "util/expected.hpp"

namespace lpx::gpu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
using CUstream = struct CUstream_st*;

// The CUresult values the checks react to (cuda.h: enum cudaError_enum).
namespace cu {
inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorOutOfMemory = 2;
inline constexpr CUresult kErrorStubLibrary = 34;
inline constexpr CUresult kErrorInsufficientDriver = 35;
inline constexpr CUresult kErrorDevicesUnavailable = 46;
inline constexpr CUresult kErrorNoDevice = 100;
inline constexpr CUresult kErrorNoBinaryForGpu = 209;
inline constexpr CUresult kErrorUnsupportedPtxVersion = 222;
inline constexpr CUresult kErrorSystemDriverMismatch = 803;
inline constexpr CUresult kErrorCompatNotSupportedOnDevice = 804;

// CUdevice_attribute values.
inline constexpr int kAttributeMultiprocessorCount = 16;
inline constexpr int kAttributeComputeCapabilityMajor = 75;
inline constexpr int kAttributeComputeCapabilityMinor = 76;

// CUjit_option values for cuModuleLoadDataEx.
inline constexpr int kJitErrorLogBuffer = 5;
inline constexpr int kJitErrorLogBufferSizeBytes = 6;
}  // namespace cu

// libcuda.so.1, loaded once and never unloaded (the driver starts threads that outlive any
// handle we hold). Every member is non-null after a successful load().
class CudaDriver {
 public:
  // Loads `library` and resolves every entry point below. The error says which step failed,
  // with dlerror()'s text. Does not call cuInit.
  static core::Expected<std::unique_ptr<CudaDriver>> load(const char* library = "libcuda.so.1");

  // The file the dynamic linker actually opened, e.g. /usr/lib/x86_64-linux-gnu/libcuda.so.1.
  const std::string& path() const noexcept { return path_; }

  // "CUDA_ERROR_NO_DEVICE (100): no CUDA-capable device is detected".
  std::string describe(CUresult result) const;

  CUresult (*cuInit)(unsigned int flags) = nullptr;
  CUresult (*cuDriverGetVersion)(int* version) = nullptr;
  CUresult (*cuGetErrorName)(CUresult error, const char** name) = nullptr;
  CUresult (*cuGetErrorString)(CUresult error, const char** text) = nullptr;

  CUresult (*cuDeviceGetCount)(int* count) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal) = nullptr;
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device) = nullptr;
  CUresult (*cuDeviceTotalMem)(std::size_t* bytes, CUdevice device) = nullptr;  // _v2
  CUresult (*cuDeviceGetPCIBusId)(char* bus_id, int length, CUdevice device) = nullptr;

  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device) = nullptr;
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device) = nullptr;  // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext context) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuMemGetInfo)(std::size_t* free, std::size_t* total) = nullptr;  // _v2

  CUresult (*cuMemAlloc)(CUdeviceptr* pointer, std::size_t bytes) = nullptr;                // _v2
  CUresult (*cuMemFree)(CUdeviceptr pointer) = nullptr;                                     // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr to, const void* from, std::size_t bytes) = nullptr;  // _v2
  CUresult (*cuMemcpyDtoH)(void* to, CUdeviceptr from, std::size_t bytes) = nullptr;        // _v2
  CUresult (*cuMemcpyDtoD)(CUdeviceptr to, CUdeviceptr from, std::size_t bytes) = nullptr;  // _v2

  CUresult (*cuEventCreate)(CUevent* event, unsigned int flags) = nullptr;
  CUresult (*cuEventDestroy)(CUevent event) = nullptr;  // _v2
  CUresult (*cuEventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent event) = nullptr;
  CUresult (*cuEventElapsedTime)(float* milliseconds, CUevent start, CUevent end) = nullptr;

  CUresult (*cuModuleLoadDataEx)(CUmodule* module, const void* image, unsigned int options,
                                 int* option_keys, void** option_values) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule module) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module,
                                  const char* name) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned int grid_x, unsigned int grid_y,
                             unsigned int grid_z, unsigned int block_x, unsigned int block_y,
                             unsigned int block_z, unsigned int shared_bytes, CUstream stream,
                             void** parameters, void** extra) = nullptr;

 private:
  CudaDriver() = default;
  std::string path_;
};

// The driver's CUDA version as "13.0" from cuDriverGetVersion's 13000.
std::string cuda_version_text(int driver_version);

}  // namespace lpx::gpu
