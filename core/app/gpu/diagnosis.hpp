// `lpx-pipeline doctor`'s findings: what this binary carries, what the machine offers (driver,
// GPUs), whether they fit, and for every problem found, plain advice. Gathering never throws and
// never needs a GPU: on a machine without one the diagnosis says why there is none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpu/compatibility.hpp"
#include "gpu/device_checks.hpp"
#include "gpu/host_facts.hpp"
#include "gpu/nvml.hpp"

namespace lpx::gpu {

// Facts about this binary, fixed at build time.
struct BinaryFacts {
  std::string version;             // LPX version
  bool cuda = false;               // built with the CUDA toolkit
  std::string cuda_toolkit;        // "13.0.88"; empty without CUDA
  std::string cuda_architectures;  // the CMake list, e.g. "80;86;90", or "disabled"
};

struct Finding {
  std::string subject;  // "driver", "GPU 0", "binary", "system"
  std::string problem;
  std::string advice;
};

struct DriverFacts {
  bool loaded = false;                      // libcuda.so.1 was loaded
  std::string library_path;                 // the file actually opened
  std::string load_error;                   // dlerror() when not loaded
  bool initialised = false;                 // cuInit succeeded
  std::string init_error;                   // cuInit's error when not
  std::optional<CudaVersion> cuda_version;  // cuDriverGetVersion
  std::optional<DriverFit> fit;             // against the toolkit (CUDA builds only)
  bool nvml_loaded = false;
  std::string nvml_error;
  std::string driver_version;  // "580.65.06" (NVML, else the kernel module's)
};

struct GpuFacts {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  std::uint64_t memory_total_bytes = 0;
  std::optional<std::uint64_t> memory_free_bytes;
  NvmlReadings nvml;                        // all empty when NVML is unavailable
  std::optional<KernelImage> kernel_image;  // CUDA builds only
  SanityResult sanity;
  BandwidthResult bandwidth;
  bool usable = false;  // this binary can run its CUDA code here
};

struct Diagnosis {
  BinaryFacts binary;
  CudaArchList architectures;
  HostFacts host;
  DriverFacts driver;
  std::vector<GpuFacts> gpus;
  std::vector<Finding> findings;  // every problem, machine-wide ones first
  std::string no_gpu;             // why no NVIDIA GPU can be reached at all; empty when one can
  int usable_gpus = 0;
  std::string summary;  // "OK: 2 GPU(s) usable" or "no usable GPU: <why>"
};

// Looks at everything, runs the device checks on every GPU, and writes the findings.
Diagnosis diagnose(const BinaryFacts& binary);

}  // namespace lpx::gpu
