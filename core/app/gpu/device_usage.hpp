// What a benchmark on a GPU backend reports beside its speed: the device's measured copy
// bandwidth (the roofline of a decode step) and the device memory in use, read through the
// driver API (dlopen'ed, like doctor) on the primary context the CUDA runtime also uses.
#pragma once

#include <cstdint>
#include <string>

#include "util/expected.hpp"

namespace lpx::gpu {

struct DeviceUsage {
  std::string name;                 // "NVIDIA H200"
  double copy_bandwidth_gbs = 0;    // device-to-device copy, read + write bytes per second
  std::uint64_t used_bytes = 0;     // total - free, this process and any other
  std::uint64_t total_bytes = 0;
};

// GPU `ordinal`'s usage now, then a 256 MiB copy-bandwidth measurement. An error says why
// (no driver, no such GPU...).
core::Expected<DeviceUsage> measure_device_usage(int ordinal);

}  // namespace lpx::gpu
