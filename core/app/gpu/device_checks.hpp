// Checks that run work on a GPU through the driver API: a small kernel whose result is compared
// with the CPU's, and device-memory copy bandwidth. Both need a current context on the device
// (cuCtxSetCurrent) and leave nothing allocated behind.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "gpu/cuda_driver.hpp"

namespace lpx::gpu {

struct SanityResult {
  bool ok = false;
  std::size_t elements = 0;      // elements computed and compared
  CUresult code = cu::kSuccess;  // the failing call's result, if a call failed
  std::string error;             // which step failed and why, or the first wrong element
};

// Loads an embedded PTX module (saxpy, PTX ISA 7.0 for sm_50, which every current driver can
// JIT-compile for its GPU), runs it on `elements` random floats and compares every result bit
// for bit with std::fma on the CPU.
SanityResult run_sanity_kernel(const CudaDriver& driver,
                               std::size_t elements = std::size_t{1} << 20);

struct BandwidthResult {
  std::optional<double> gigabytes_per_second;  // (read + write bytes) / best time, 1 GB = 1e9 B
  std::size_t bytes = 0;                       // bytes per copy (each read once, written once)
  int repetitions = 0;
  CUresult code = cu::kSuccess;
  std::string error;
};

// Times cuMemcpyDtoD of `bytes` between two device buffers with events: one warm-up copy, then
// the best of `repetitions`. Halves the size (down to 16 MiB) when the device lacks the memory.
BandwidthResult measure_copy_bandwidth(const CudaDriver& driver,
                                       std::size_t bytes = std::size_t{256} << 20,
                                       int repetitions = 5);

// The PTX source of the sanity kernel, for tests and docs.
const char* sanity_kernel_ptx();

}  // namespace lpx::gpu
