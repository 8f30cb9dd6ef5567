#include "gpu_gauges.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "metrics.hpp"

namespace lpx::http {
namespace {

// The few NVML types and constants used, as nvml.h defines them (its ABI is stable).
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlUtilization_t {
  unsigned gpu, memory;  // percent
};
constexpr nvmlReturn_t kSuccess = 0;
constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
constexpr int kClockSm = 1;         // NVML_CLOCK_SM

// nvmlClocksThrottleReasons bits, by the names NVML gives them.
constexpr struct {
  unsigned long long bit;
  const char* name;
} kThrottleReasons[] = {
    {0x1, "gpu_idle"},           {0x2, "applications_clocks_setting"},
    {0x4, "sw_power_cap"},       {0x8, "hw_slowdown"},
    {0x10, "sync_boost"},        {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"},
    {0x100, "display_clock_setting"},
};

template <class Function>
bool resolve(void* library, Function& slot, const char* name) {
  slot = reinterpret_cast<Function>(dlsym(library, name));
  return slot != nullptr;
}

}  // namespace

struct GpuGauges::Api {
  void* library = nullptr;
  nvmlReturn_t (*init)() = nullptr;  // nvmlInit_v2
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;                  // nvmlDeviceGetCount_v2
  nvmlReturn_t (*handle)(unsigned, nvmlDevice_t*) = nullptr;   // nvmlDeviceGetHandleByIndex_v2
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*uuid)(nvmlDevice_t, char*, unsigned) = nullptr;
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;  // milliwatts
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*throttle)(nvmlDevice_t, unsigned long long*) = nullptr;
};

std::unique_ptr<GpuGauges> GpuGauges::open(std::string& why) {
  const char* path = std::getenv("LPX_NVML_LIBRARY");
  const char* library = path != nullptr && *path != '\0' ? path : "libnvidia-ml.so.1";
  void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    why = std::string("NVML cannot be loaded: ") + (error != nullptr ? error : library);
    return nullptr;
  }
  auto api = std::make_unique<Api>();
  api->library = handle;
  if (!resolve(handle, api->init, "nvmlInit_v2") || !resolve(handle, api->shutdown, "nvmlShutdown") ||
      !resolve(handle, api->count, "nvmlDeviceGetCount_v2") ||
      !resolve(handle, api->handle, "nvmlDeviceGetHandleByIndex_v2")) {
    why = std::string(library) + " lacks nvmlInit_v2, nvmlShutdown, nvmlDeviceGetCount_v2 or "
                                 "nvmlDeviceGetHandleByIndex_v2";
    dlclose(handle);
    return nullptr;
  }
  resolve(handle, api->name, "nvmlDeviceGetName");
  resolve(handle, api->uuid, "nvmlDeviceGetUUID");
  resolve(handle, api->memory, "nvmlDeviceGetMemoryInfo");
  resolve(handle, api->utilization, "nvmlDeviceGetUtilizationRates");
  resolve(handle, api->temperature, "nvmlDeviceGetTemperature");
  resolve(handle, api->power, "nvmlDeviceGetPowerUsage");
  resolve(handle, api->clock, "nvmlDeviceGetClockInfo");
  // Renamed "clocks event reasons" in newer drivers; the old name stays exported.
  if (!resolve(handle, api->throttle, "nvmlDeviceGetCurrentClocksEventReasons")) {
    resolve(handle, api->throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  if (const nvmlReturn_t r = api->init(); r != kSuccess) {
    why = "nvmlInit_v2 failed with NVML error " + std::to_string(r);
    dlclose(handle);
    return nullptr;
  }
  return std::unique_ptr<GpuGauges>(new GpuGauges(std::move(api)));
}

GpuGauges::GpuGauges(std::unique_ptr<Api> api) : api_(std::move(api)) {}

GpuGauges::~GpuGauges() {
  api_->shutdown();
  dlclose(api_->library);
}

std::size_t GpuGauges::gpus() const noexcept {
  unsigned count = 0;
  return api_->count(&count) == kSuccess ? count : 0;
}

void GpuGauges::render(std::string& out) const {
  struct Gpu {
    std::string labels;
    nvmlDevice_t device;
  };
  std::vector<Gpu> gpus;
  for (unsigned i = 0; i < this->gpus(); ++i) {
    nvmlDevice_t device = nullptr;
    if (api_->handle(i, &device) != kSuccess) continue;
    char name[96] = "";
    char uuid[96] = "";
    if (api_->name != nullptr) api_->name(device, name, sizeof name);
    if (api_->uuid != nullptr) api_->uuid(device, uuid, sizeof uuid);
    gpus.push_back({"{gpu=\"" + std::to_string(i) + "\",name=\"" + label_value(name) + "\",uuid=\"" +
                        label_value(uuid) + "\"}",
                    device});
  }
  // One metric at a time over every GPU, as the exposition format wants them grouped.
  const auto metric = [&](const char* name, const char* help, auto&& read) {
    bool header = false;
    for (const Gpu& gpu : gpus) {
      double value = 0;
      if (!read(gpu.device, value)) continue;
      if (!header) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
        header = true;
      }
      append_sample(out, name + gpu.labels, value);
    }
  };
  nvmlMemory_t memory{};
  metric("lpx_gpu_memory_used_bytes", "GPU memory in use (NVML)", [&](nvmlDevice_t d, double& v) {
    if (api_->memory == nullptr || api_->memory(d, &memory) != kSuccess) return false;
    v = static_cast<double>(memory.used);
    return true;
  });
  metric("lpx_gpu_memory_total_bytes", "GPU memory in all (NVML)", [&](nvmlDevice_t d, double& v) {
    if (api_->memory == nullptr || api_->memory(d, &memory) != kSuccess) return false;
    v = static_cast<double>(memory.total);
    return true;
  });
  metric("lpx_gpu_utilization_ratio", "Share of the last sample period a kernel ran (NVML)",
         [&](nvmlDevice_t d, double& v) {
           nvmlUtilization_t u{};
           if (api_->utilization == nullptr || api_->utilization(d, &u) != kSuccess) return false;
           v = u.gpu / 100.0;
           return true;
         });
  metric("lpx_gpu_temperature_celsius", "GPU core temperature (NVML)", [&](nvmlDevice_t d, double& v) {
    unsigned t = 0;
    if (api_->temperature == nullptr || api_->temperature(d, kTemperatureGpu, &t) != kSuccess) return false;
    v = t;
    return true;
  });
  metric("lpx_gpu_power_watts", "GPU power draw (NVML)", [&](nvmlDevice_t d, double& v) {
    unsigned milliwatts = 0;
    if (api_->power == nullptr || api_->power(d, &milliwatts) != kSuccess) return false;
    v = milliwatts / 1000.0;
    return true;
  });
  metric("lpx_gpu_sm_clock_hertz", "GPU SM clock (NVML)", [&](nvmlDevice_t d, double& v) {
    unsigned mhz = 0;
    if (api_->clock == nullptr || api_->clock(d, kClockSm, &mhz) != kSuccess) return false;
    v = mhz * 1e6;
    return true;
  });
  metric("lpx_gpu_throttle_reasons", "Why the GPU's clocks are held down: NVML's bit mask, 0 = none",
         [&](nvmlDevice_t d, double& v) {
           unsigned long long reasons = 0;
           if (api_->throttle == nullptr || api_->throttle(d, &reasons) != kSuccess) return false;
           v = static_cast<double>(reasons);
           return true;
         });
  // The same reasons one series each, for alerts that name them.
  bool header = false;
  for (const Gpu& gpu : gpus) {
    unsigned long long reasons = 0;
    if (api_->throttle == nullptr || api_->throttle(gpu.device, &reasons) != kSuccess) continue;
    if (!header) {
      out += "# HELP lpx_gpu_throttled 1 while NVML reports this reason holding the clocks down\n"
             "# TYPE lpx_gpu_throttled gauge\n";
      header = true;
    }
    for (const auto& reason : kThrottleReasons) {
      std::string labels = gpu.labels;
      labels.insert(labels.size() - 1, std::string(",reason=\"") + reason.name + "\"");
      append_sample(out, "lpx_gpu_throttled" + labels, (reasons & reason.bit) != 0 ? 1 : 0);
    }
  }
}

}  // namespace lpx::http
