// NVML (libnvidia-ml.so.1), loaded with dlopen at run time for the readings the driver API does
// not give: clocks, temperature and power. Every reading is optional; a GPU or driver that does
// not support one (NVML_ERROR_NOT_SUPPORTED) simply lacks it.
//
// Thread safety: NVML is thread-safe; one Nvml object is meant for one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "util/expected.hpp"

namespace lpx::gpu {

// What NVML reports about one GPU. Clocks in MHz, temperature in degrees Celsius, power in watts.
struct NvmlReadings {
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> sm_clock_max_mhz;
  std::optional<unsigned> memory_clock_mhz;
  std::optional<unsigned> memory_clock_max_mhz;
  std::optional<unsigned> temperature_c;
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
  std::optional<std::uint64_t> memory_free_bytes;
  std::string error;  // why the device was not found, when every reading is missing
};

// An initialised NVML: nvmlInit_v2 on load, nvmlShutdown on destruction. The library itself
// stays loaded.
class Nvml {
 public:
  // Loads `library` and calls nvmlInit_v2. The error is dlerror()'s text or NVML's.
  static core::Expected<std::unique_ptr<Nvml>> load(const char* library = "libnvidia-ml.so.1");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // The driver version, e.g. "580.65.06"; empty when NVML cannot say.
  std::string driver_version() const;

  // The readings of the GPU at `pci_bus_id` ("0000:65:00.0", as cuDeviceGetPCIBusId writes it).
  // Found by bus id, not index: CUDA and NVML number devices differently, and
  // CUDA_VISIBLE_DEVICES renumbers only CUDA's.
  NvmlReadings read(const std::string& pci_bus_id) const;

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace lpx::gpu
