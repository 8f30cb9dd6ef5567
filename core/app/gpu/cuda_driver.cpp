#include "gpu/cuda_driver.hpp"

#include <dlfcn.h>

#include <initializer_list>

namespace lpx::gpu {
namespace {

// Stores the first of `names` the library exports into `slot`; the later names are older
// spellings of the same entry point, for drivers that predate the versioned one.
template <class Function>
void resolve(void* library, Function& slot, std::initializer_list<const char*> names,
             std::string& missing) {
  for (const char* name : names) {
    if (void* symbol = dlsym(library, name)) {
      slot = reinterpret_cast<Function>(symbol);
      return;
    }
  }
  missing += missing.empty() ? "" : ", ";
  missing += *names.begin();
}

// For libraries whose cuGetErrorName does not work (the toolkit's stub).
const char* known_error_name(CUresult result) {
  switch (result) {
    case cu::kErrorOutOfMemory:
      return "CUDA_ERROR_OUT_OF_MEMORY";
    case cu::kErrorStubLibrary:
      return "CUDA_ERROR_STUB_LIBRARY";
    case cu::kErrorInsufficientDriver:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case cu::kErrorDevicesUnavailable:
      return "CUDA_ERROR_DEVICES_UNAVAILABLE";
    case cu::kErrorNoDevice:
      return "CUDA_ERROR_NO_DEVICE";
    case cu::kErrorNoBinaryForGpu:
      return "CUDA_ERROR_NO_BINARY_FOR_GPU";
    case cu::kErrorUnsupportedPtxVersion:
      return "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
    case cu::kErrorSystemDriverMismatch:
      return "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH";
    case cu::kErrorCompatNotSupportedOnDevice:
      return "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE";
    default:
      return nullptr;
  }
}

}  // namespace

core::Expected<std::unique_ptr<CudaDriver>> CudaDriver::load(const char* library) {
  dlerror();
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return core::unavailable(std::string(why != nullptr ? why : library));
  }
  std::unique_ptr<CudaDriver> d(new CudaDriver());
  std::string missing;
  resolve(handle, d->cuInit, {"cuInit"}, missing);
  resolve(handle, d->cuDriverGetVersion, {"cuDriverGetVersion"}, missing);
  resolve(handle, d->cuGetErrorName, {"cuGetErrorName"}, missing);
  resolve(handle, d->cuGetErrorString, {"cuGetErrorString"}, missing);
  resolve(handle, d->cuDeviceGetCount, {"cuDeviceGetCount"}, missing);
  resolve(handle, d->cuDeviceGet, {"cuDeviceGet"}, missing);
  resolve(handle, d->cuDeviceGetName, {"cuDeviceGetName"}, missing);
  resolve(handle, d->cuDeviceGetAttribute, {"cuDeviceGetAttribute"}, missing);
  resolve(handle, d->cuDeviceTotalMem, {"cuDeviceTotalMem_v2"}, missing);
  resolve(handle, d->cuDeviceGetPCIBusId, {"cuDeviceGetPCIBusId"}, missing);
  resolve(handle, d->cuDevicePrimaryCtxRetain, {"cuDevicePrimaryCtxRetain"}, missing);
  resolve(handle, d->cuDevicePrimaryCtxRelease,
          {"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, missing);
  resolve(handle, d->cuCtxSetCurrent, {"cuCtxSetCurrent"}, missing);
  resolve(handle, d->cuCtxSynchronize, {"cuCtxSynchronize"}, missing);
  resolve(handle, d->cuMemGetInfo, {"cuMemGetInfo_v2"}, missing);
  resolve(handle, d->cuMemAlloc, {"cuMemAlloc_v2"}, missing);
  resolve(handle, d->cuMemFree, {"cuMemFree_v2"}, missing);
  resolve(handle, d->cuMemcpyHtoD, {"cuMemcpyHtoD_v2"}, missing);
  resolve(handle, d->cuMemcpyDtoH, {"cuMemcpyDtoH_v2"}, missing);
  resolve(handle, d->cuMemcpyDtoD, {"cuMemcpyDtoD_v2"}, missing);
  resolve(handle, d->cuEventCreate, {"cuEventCreate"}, missing);
  resolve(handle, d->cuEventDestroy, {"cuEventDestroy_v2", "cuEventDestroy"}, missing);
  resolve(handle, d->cuEventRecord, {"cuEventRecord"}, missing);
  resolve(handle, d->cuEventSynchronize, {"cuEventSynchronize"}, missing);
  resolve(handle, d->cuEventElapsedTime, {"cuEventElapsedTime_v2", "cuEventElapsedTime"}, missing);
  resolve(handle, d->cuModuleLoadDataEx, {"cuModuleLoadDataEx"}, missing);
  resolve(handle, d->cuModuleUnload, {"cuModuleUnload"}, missing);
  resolve(handle, d->cuModuleGetFunction, {"cuModuleGetFunction"}, missing);
  resolve(handle, d->cuLaunchKernel, {"cuLaunchKernel"}, missing);

  Dl_info info{};
  d->path_ = d->cuInit != nullptr && dladdr(reinterpret_cast<void*>(d->cuInit), &info) != 0 &&
                     info.dli_fname != nullptr
                 ? info.dli_fname
                 : library;
  if (!missing.empty()) {
    return core::unsupported(d->path_ + " lacks driver API entry points: " + missing);
  }
  return d;
}

std::string CudaDriver::describe(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != cu::kSuccess) name = known_error_name(result);
  if (cuGetErrorString(result, &text) != cu::kSuccess) text = nullptr;
  std::string out = name != nullptr ? name : "CUDA error";
  out += " (" + std::to_string(result) + ")";
  if (text != nullptr) out += std::string(": ") + text;
  return out;
}

std::string cuda_version_text(int driver_version) {
  return std::to_string(driver_version / 1000) + "." + std::to_string(driver_version % 1000 / 10);
}

}  // namespace lpx::gpu
