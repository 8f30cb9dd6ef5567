#include "gpu/device_usage.hpp"

#include "gpu/device_checks.hpp"

namespace lpx::gpu {

core::Expected<DeviceUsage> measure_device_usage(int ordinal) {
  auto loaded = CudaDriver::load();
  if (!loaded) return core::unexpected(loaded.error());
  const CudaDriver& d = **loaded;
  if (const CUresult r = d.cuInit(0); r != cu::kSuccess) {
    return core::unavailable("cuInit: " + d.describe(r));
  }
  CUdevice device = 0;
  if (const CUresult r = d.cuDeviceGet(&device, ordinal); r != cu::kSuccess) {
    return core::unavailable("cuDeviceGet(" + std::to_string(ordinal) + "): " + d.describe(r));
  }
  DeviceUsage usage;
  char name[256] = {};
  d.cuDeviceGetName(name, sizeof name, device);
  usage.name = name;
  CUcontext context = nullptr;
  if (const CUresult r = d.cuDevicePrimaryCtxRetain(&context, device); r != cu::kSuccess) {
    return core::unavailable("cuDevicePrimaryCtxRetain: " + d.describe(r));
  }
  std::string error;
  if (const CUresult r = d.cuCtxSetCurrent(context); r != cu::kSuccess) {
    error = "cuCtxSetCurrent: " + d.describe(r);
  } else {
    std::size_t free = 0;
    std::size_t total = 0;
    if (d.cuMemGetInfo(&free, &total) == cu::kSuccess) {
      usage.used_bytes = total - free;
      usage.total_bytes = total;
    }
    const BandwidthResult bandwidth = measure_copy_bandwidth(d);
    if (bandwidth.gigabytes_per_second) {
      usage.copy_bandwidth_gbs = *bandwidth.gigabytes_per_second;
    } else {
      error = "measuring the copy bandwidth: " + bandwidth.error;
    }
  }
  d.cuDevicePrimaryCtxRelease(device);
  if (!error.empty()) return core::unavailable(error);
  return usage;
}

}  // namespace lpx::gpu
