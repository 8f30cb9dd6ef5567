// GPU gauges for /metrics from NVML (libnvidia-ml.so.1, or $LPX_NVML_LIBRARY), loaded with
// dlopen so that the server needs no NVIDIA library to start: memory used and total,
// utilisation, temperature, power, SM clock and throttle reasons of every GPU NVML sees,
// labelled by its index, name and UUID. Thread-safe (NVML is).
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace lpx::http {

class GpuGauges {
 public:
  // NVML loaded and initialised, or nullptr with `why` set (the library is missing, lacks a
  // function, or nvmlInit_v2 failed).
  static std::unique_ptr<GpuGauges> open(std::string& why);
  ~GpuGauges();
  GpuGauges(const GpuGauges&) = delete;
  GpuGauges& operator=(const GpuGauges&) = delete;

  // Appends the gauges (text exposition format) of every GPU; a reading NVML does not
  // support on a GPU is left out.
  void render(std::string& out) const;

  std::size_t gpus() const noexcept;

 private:
  struct Api;
  explicit GpuGauges(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace lpx::http
