#include "gpu/nvml.hpp"

#include <dlfcn.h>

namespace lpx::gpu {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr int kClockSm = 1;      // nvmlClockType_t NVML_CLOCK_SM
constexpr int kClockMemory = 2;  // NVML_CLOCK_MEM
constexpr int kTemperatureGpu = 0;

template <class Function>
bool resolve(void* library, Function& slot, const char* name) {
  slot = reinterpret_cast<Function>(dlsym(library, name));
  return slot != nullptr;
}

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)() = nullptr;  // nvmlInit_v2
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*system_driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;  // _v2
  nvmlReturn_t (*clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock_info)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned*) = nullptr;             // mW
  nvmlReturn_t (*power_management_limit)(nvmlDevice_t, unsigned*) = nullptr;  // mW
  nvmlReturn_t (*memory_info)(nvmlDevice_t, nvmlMemory_t*) = nullptr;

  std::string describe(nvmlReturn_t result) const {
    const char* text = error_string != nullptr ? error_string(result) : nullptr;
    return std::string(text != nullptr ? text : "NVML error") + " (" + std::to_string(result) + ")";
  }
};

core::Expected<std::unique_ptr<Nvml>> Nvml::load(const char* library) {
  dlerror();
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return core::unavailable(std::string(why != nullptr ? why : library));
  }
  auto api = std::make_unique<Api>();
  // Only init, shutdown and the device lookup are required; a missing reading is just missing.
  if (!resolve(handle, api->init, "nvmlInit_v2") ||
      !resolve(handle, api->shutdown, "nvmlShutdown") ||
      !resolve(handle, api->handle_by_pci_bus_id, "nvmlDeviceGetHandleByPciBusId_v2")) {
    return core::unsupported(std::string(library) +
                            " lacks nvmlInit_v2, nvmlShutdown or "
                            "nvmlDeviceGetHandleByPciBusId_v2");
  }
  resolve(handle, api->error_string, "nvmlErrorString");
  resolve(handle, api->system_driver_version, "nvmlSystemGetDriverVersion");
  resolve(handle, api->clock_info, "nvmlDeviceGetClockInfo");
  resolve(handle, api->max_clock_info, "nvmlDeviceGetMaxClockInfo");
  resolve(handle, api->temperature, "nvmlDeviceGetTemperature");
  resolve(handle, api->power_usage, "nvmlDeviceGetPowerUsage");
  resolve(handle, api->power_management_limit, "nvmlDeviceGetPowerManagementLimit");
  resolve(handle, api->memory_info, "nvmlDeviceGetMemoryInfo");
  if (const nvmlReturn_t r = api->init(); r != kNvmlSuccess) {
    return core::unavailable("nvmlInit_v2 failed: " + api->describe(r));
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() { api_->shutdown(); }

std::string Nvml::driver_version() const {
  char version[96] = {};
  if (api_->system_driver_version == nullptr ||
      api_->system_driver_version(version, sizeof version - 1) != kNvmlSuccess) {
    return {};
  }
  return version;
}

NvmlReadings Nvml::read(const std::string& pci_bus_id) const {
  NvmlReadings out;
  nvmlDevice_t device = nullptr;
  if (const nvmlReturn_t r = api_->handle_by_pci_bus_id(pci_bus_id.c_str(), &device);
      r != kNvmlSuccess) {
    out.error = "NVML does not find " + pci_bus_id + ": " + api_->describe(r);
    return out;
  }
  const auto reading = [](auto function, auto... arguments) -> std::optional<unsigned> {
    unsigned value = 0;
    if (function == nullptr || function(arguments..., &value) != kNvmlSuccess) return std::nullopt;
    return value;
  };
  out.sm_clock_mhz = reading(api_->clock_info, device, kClockSm);
  out.sm_clock_max_mhz = reading(api_->max_clock_info, device, kClockSm);
  out.memory_clock_mhz = reading(api_->clock_info, device, kClockMemory);
  out.memory_clock_max_mhz = reading(api_->max_clock_info, device, kClockMemory);
  out.temperature_c = reading(api_->temperature, device, kTemperatureGpu);
  if (const auto mw = reading(api_->power_usage, device)) out.power_w = *mw / 1000.0;
  if (const auto mw = reading(api_->power_management_limit, device))
    out.power_limit_w = *mw / 1000.0;
  nvmlMemory_t memory{};
  if (api_->memory_info != nullptr && api_->memory_info(device, &memory) == kNvmlSuccess) {
    out.memory_free_bytes = memory.free;
  }
  return out;
}

}  // namespace lpx::gpu
