#include "gpu/diagnosis.hpp"

#include <algorithm>
#include <filesystem>
#include <memory>

#include "gpu/cuda_driver.hpp"

namespace lpx::gpu {
namespace {

// The advice of each finding. docs/doctor.md lists the same problems; keep them in step.
constexpr const char* kInstallDriver =
    "install the NVIDIA driver (Debian/Ubuntu: the nvidia-driver package, or nvidia.com/drivers) "
    "and reboot";
constexpr const char* kContainerGpus =
    "the NVIDIA Container Toolkit passes the host's driver and GPUs into a container: install it "
    "on the host and start the container with --gpus all (Docker, Podman) or request "
    "nvidia.com/gpu (Kubernetes)";
constexpr const char* kFaultyGpu =
    "look for 'NVRM: Xid' lines in dmesg and check nvidia-smi; a GPU reset (nvidia-smi -r) or a "
    "reboot clears most faults";

std::string driver_advice(const HostFacts& host) {
  if (host.in_container) {
    return std::string("this is a container: ") + kContainerGpus + ". Outside containers, " +
           kInstallDriver;
  }
  return std::string(kInstallDriver) + ". In a container: " + kContainerGpus;
}

void add(Diagnosis& dx, std::string subject, std::string problem, std::string advice) {
  dx.findings.push_back({std::move(subject), std::move(problem), std::move(advice)});
}

// Fills dx.no_gpu and its finding when libcuda.so.1 does not load.
void no_driver(Diagnosis& dx) {
  dx.no_gpu = "no NVIDIA driver found (libcuda.so.1 not loadable)";
  std::string advice = driver_advice(dx.host);
  if (dx.host.nvidia_module_loaded) {
    const std::string version =
        dx.host.nvidia_module_version.empty() ? "" : " " + dx.host.nvidia_module_version;
    advice = "the nvidia kernel module" + version +
             " is loaded but its user-space library libcuda.so.1 is missing: install the driver's "
             "libraries of the same version (e.g. libcuda1, libnvidia-compute). In a container: " +
             kContainerGpus;
  }
  add(dx, "driver", dx.no_gpu, advice);
}

// Fills dx.no_gpu and its finding when cuInit fails.
void init_failed(Diagnosis& dx, CUresult result) {
  const HostFacts& host = dx.host;
  std::string advice;
  if (result == cu::kErrorStubLibrary) {
    std::error_code error;
    const std::filesystem::path real = std::filesystem::canonical(dx.driver.library_path, error);
    dx.no_gpu = "libcuda.so.1 is the CUDA toolkit's stub library (" +
                (error ? dx.driver.library_path : real.string()) + "), not the NVIDIA driver";
    advice =
        "remove the toolkit's lib/stubs folder from LD_LIBRARY_PATH (the stub is only for "
        "linking); if no driver is installed, " +
        std::string(kInstallDriver);
  } else if (result == cu::kErrorNoDevice && host.cuda_visible_devices &&
             (host.cuda_visible_devices->empty() || host.cuda_visible_devices->front() == '-')) {
    dx.no_gpu = "CUDA_VISIBLE_DEVICES='" + *host.cuda_visible_devices + "' hides every GPU";
    advice = "unset CUDA_VISIBLE_DEVICES or list the GPUs to use, e.g. CUDA_VISIBLE_DEVICES=0";
  } else if (result == cu::kErrorNoDevice && !host.has_device_nodes()) {
    dx.no_gpu =
        "the NVIDIA driver library is installed, but there are no /dev/nvidia* device nodes: "
        "this process cannot reach a GPU";
    advice = host.in_container
                 ? std::string("start the container with --gpus all (NVIDIA Container Toolkit)")
                 : "load the driver (sudo modprobe nvidia; nvidia-modprobe creates the nodes) "
                   "or reboot after installing it. In a container: " +
                       std::string(kContainerGpus);
  } else if (result == cu::kErrorNoDevice) {
    dx.no_gpu = "the NVIDIA driver found no CUDA-capable GPU";
    advice = "check nvidia-smi and CUDA_VISIBLE_DEVICES" +
             (host.cuda_visible_devices ? " (it is '" + *host.cuda_visible_devices + "')"
                                        : std::string()) +
             "; " + kFaultyGpu;
  } else if (result == cu::kErrorSystemDriverMismatch) {
    dx.no_gpu =
        "the driver library libcuda.so.1 and the loaded nvidia kernel module" +
        (host.nvidia_module_version.empty() ? "" : " (" + host.nvidia_module_version + ")") +
        " are different versions";
    advice =
        "the driver was updated without a reboot: reboot, or unload and reload the nvidia "
        "kernel modules";
  } else if (result == cu::kErrorCompatNotSupportedOnDevice) {
    dx.no_gpu = "the CUDA forward-compatibility driver (" + dx.driver.library_path +
                ") does not support this GPU";
    advice =
        "remove the cuda-compat folder from LD_LIBRARY_PATH (forward compatibility is for "
        "data-center GPUs only) and use the system driver, updating it if it is too old";
  } else {
    dx.no_gpu = "the NVIDIA driver failed to start: " + dx.driver.init_error;
    advice =
        "check that /dev/nvidia* are readable and writable by this user (the video group), then " +
        std::string(kFaultyGpu);
  }
  add(dx, "driver", dx.no_gpu, advice);
}

void check_driver_fit(Diagnosis& dx) {
  const auto toolkit = parse_cuda_version(dx.binary.cuda_toolkit);
  if (!dx.binary.cuda || !toolkit || !dx.driver.cuda_version) return;
  const CudaVersion driver = *dx.driver.cuda_version;
  dx.driver.fit = driver_fit(driver, *toolkit);
  const std::string minimum = minimum_driver_for(toolkit->major);
  const std::string branch = minimum.empty() ? "" : " (driver " + minimum + " or newer)";
  if (*dx.driver.fit == DriverFit::too_old) {
    add(dx, "driver",
        "the driver is too old for the runtime: it supports CUDA " + to_string(driver) +
            ", this binary was built with CUDA " + to_string(*toolkit) +
            " (\"CUDA driver version is insufficient for CUDA runtime version\")",
        "update the NVIDIA driver to one for CUDA " + std::to_string(toolkit->major) + ".x" +
            branch + ", or rebuild LPX with a CUDA " + std::to_string(driver.major) + ".x toolkit");
  } else if (*dx.driver.fit == DriverFit::minor_older) {
    add(dx, "driver",
        "the driver supports CUDA " + to_string(driver) + ", older than this binary's " +
            to_string(*toolkit) +
            ": cubins run (minor-version compatibility), but PTX from the newer toolkit cannot be "
            "JIT-compiled and its newest features are missing",
        "update the NVIDIA driver to one that supports CUDA " + to_string(*toolkit) + " or newer");
  }
}

constexpr const char* kWrongResults =
    "the GPU computes wrong results: check nvidia-smi -q -d ECC and dmesg for Xid errors; reset "
    "the GPU (nvidia-smi -r); if it persists, the GPU is faulty";

// The advice for a driver call that failed on a GPU.
std::string failure_advice(CUresult code) {
  switch (code) {
    case cu::kErrorOutOfMemory:
      return "the GPU's memory is full: nvidia-smi lists the processes holding it";
    case cu::kErrorDevicesUnavailable:
      return "the GPU is busy in exclusive-process compute mode, or MIG is on without an instance "
             "given: see nvidia-smi -q -d COMPUTE and CUDA_VISIBLE_DEVICES";
    case cu::kErrorUnsupportedPtxVersion:
    case cu::kErrorNoBinaryForGpu:
      return "the driver cannot compile PTX 7.0 for this GPU: update the NVIDIA driver";
    default:
      return kFaultyGpu;
  }
}

void check_gpu(Diagnosis& dx, const CudaDriver& d, const Nvml* nvml, int index) {
  GpuFacts g;
  g.index = index;
  const std::string subject = "GPU " + std::to_string(index);
  CUdevice device = 0;
  if (const CUresult r = d.cuDeviceGet(&device, index); r != cu::kSuccess) {
    g.sanity.code = r;
    g.sanity.error = "cuDeviceGet: " + d.describe(r);
    add(dx, subject, g.sanity.error, kFaultyGpu);
    dx.gpus.push_back(std::move(g));
    return;
  }
  char text[256] = {};
  if (d.cuDeviceGetName(text, sizeof text - 1, device) == cu::kSuccess) g.name = text;
  char bus[32] = {};
  if (d.cuDeviceGetPCIBusId(bus, sizeof bus - 1, device) == cu::kSuccess) g.pci_bus_id = bus;
  d.cuDeviceGetAttribute(&g.cc_major, cu::kAttributeComputeCapabilityMajor, device);
  d.cuDeviceGetAttribute(&g.cc_minor, cu::kAttributeComputeCapabilityMinor, device);
  d.cuDeviceGetAttribute(&g.sm_count, cu::kAttributeMultiprocessorCount, device);
  std::size_t total = 0;
  if (d.cuDeviceTotalMem(&total, device) == cu::kSuccess) g.memory_total_bytes = total;
  if (nvml != nullptr && !g.pci_bus_id.empty()) g.nvml = nvml->read(g.pci_bus_id);

  const std::string sm = std::to_string(g.cc_major) + std::to_string(g.cc_minor);
  if (dx.binary.cuda) {
    g.kernel_image = find_kernel_image(dx.architectures, g.cc_major, g.cc_minor);
    if (g.kernel_image->kind == KernelImageKind::none) {
      add(dx, subject,
          "no kernel image is available for execution on the device: this binary carries " +
              describe(dx.architectures) + ", this GPU is sm_" + sm,
          "rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + sm + " (or add " + sm + " to the list)");
    } else if (g.kernel_image->kind == KernelImageKind::ptx &&
               dx.driver.fit == DriverFit::minor_older) {
      add(dx, subject,
          "this GPU would run PTX (compute_" + arch_name(*g.kernel_image) +
              ") that the older driver cannot JIT-compile",
          "update the NVIDIA driver, or rebuild with -DCMAKE_CUDA_ARCHITECTURES=" + sm +
              " to carry a cubin");
    }
  }

  CUcontext context = nullptr;
  if (const CUresult r = d.cuDevicePrimaryCtxRetain(&context, device); r != cu::kSuccess) {
    g.sanity.code = r;
    g.sanity.error = "creating a context (cuDevicePrimaryCtxRetain): " + d.describe(r);
  } else {
    d.cuCtxSetCurrent(context);
    std::size_t free = 0;
    if (d.cuMemGetInfo(&free, &total) == cu::kSuccess) g.memory_free_bytes = free;
    g.sanity = run_sanity_kernel(d);
    if (g.sanity.ok) g.bandwidth = measure_copy_bandwidth(d);
    d.cuCtxSetCurrent(nullptr);
    d.cuDevicePrimaryCtxRelease(device);
  }
  if (!g.memory_free_bytes) g.memory_free_bytes = g.nvml.memory_free_bytes;
  if (!g.sanity.ok) {
    // A failed call sets the code; a kernel that ran and computed wrong results leaves it 0.
    add(dx, subject, g.sanity.error,
        g.sanity.code == cu::kSuccess ? kWrongResults : failure_advice(g.sanity.code));
  }
  const bool bandwidth_ok =
      g.bandwidth.gigabytes_per_second || g.bandwidth.code == cu::kErrorOutOfMemory;
  if (g.sanity.ok && !g.bandwidth.gigabytes_per_second) {
    add(dx, subject, "copy bandwidth could not be measured: " + g.bandwidth.error,
        failure_advice(g.bandwidth.code));
  }
  const bool image_ok =
      g.kernel_image && g.kernel_image->kind != KernelImageKind::none &&
      !(g.kernel_image->kind == KernelImageKind::ptx && dx.driver.fit == DriverFit::minor_older);
  g.usable = dx.binary.cuda && image_ok && dx.driver.fit != DriverFit::too_old && g.sanity.ok &&
             bandwidth_ok;
  dx.gpus.push_back(std::move(g));
}

void summarise(Diagnosis& dx) {
  for (const GpuFacts& g : dx.gpus) dx.usable_gpus += g.usable ? 1 : 0;
  if (dx.usable_gpus > 0) {
    dx.summary = "OK: " + std::to_string(dx.usable_gpus) + " GPU(s) usable";
    if (static_cast<std::size_t>(dx.usable_gpus) < dx.gpus.size()) {
      dx.summary += " (of " + std::to_string(dx.gpus.size()) + ")";
    }
  } else if (!dx.no_gpu.empty()) {
    dx.summary = "no usable GPU: " + dx.no_gpu;
  } else if (!dx.binary.cuda) {
    dx.summary = "no usable GPU: this lpx-pipeline was built without CUDA";
  } else if (!dx.findings.empty()) {
    // A GPU's own problem says more than a machine-wide one (a driver warning, say).
    auto reason = std::find_if(dx.findings.begin(), dx.findings.end(),
                               [](const Finding& f) { return f.subject.rfind("GPU ", 0) == 0; });
    if (reason == dx.findings.end()) reason = dx.findings.begin();
    dx.summary = "no usable GPU: " + reason->problem;
  } else {
    dx.summary = "no usable GPU: no GPU passed the checks";
  }
}

}  // namespace

Diagnosis diagnose(const BinaryFacts& binary) {
  Diagnosis dx;
  dx.binary = binary;
  dx.architectures = parse_cuda_architectures(binary.cuda ? binary.cuda_architectures : "disabled");
  dx.host = read_host_facts();
  if (dx.host.nouveau_loaded) {
    add(dx, "system",
        "the open-source nouveau driver is loaded; CUDA needs NVIDIA's driver, and both cannot "
        "drive a GPU",
        "install the NVIDIA driver, which blacklists nouveau (or put 'blacklist nouveau' and "
        "'options nouveau modeset=0' in /etc/modprobe.d/blacklist-nouveau.conf and run "
        "update-initramfs -u), then reboot");
  }

  auto loaded = CudaDriver::load();
  std::unique_ptr<CudaDriver> driver;
  if (loaded) {
    driver = std::move(*loaded);
    dx.driver.loaded = true;
    dx.driver.library_path = driver->path();
  } else {
    dx.driver.load_error = loaded.error().message;
  }

  auto nvml_loaded = Nvml::load();
  std::unique_ptr<Nvml> nvml;
  if (nvml_loaded) {
    nvml = std::move(*nvml_loaded);
    dx.driver.nvml_loaded = true;
    dx.driver.driver_version = nvml->driver_version();
  } else {
    dx.driver.nvml_error = nvml_loaded.error().message;
  }
  if (dx.driver.driver_version.empty()) dx.driver.driver_version = dx.host.nvidia_module_version;

  if (!driver) {
    no_driver(dx);
    summarise(dx);
    return dx;
  }
  int version = 0;
  if (driver->cuDriverGetVersion(&version) == cu::kSuccess && version > 0) {
    dx.driver.cuda_version = driver_cuda_version(version);
  }
  if (const CUresult r = driver->cuInit(0); r != cu::kSuccess) {
    dx.driver.init_error = driver->describe(r);
    init_failed(dx, r);
    summarise(dx);
    return dx;
  }
  dx.driver.initialised = true;
  check_driver_fit(dx);

  int count = 0;
  if (const CUresult r = driver->cuDeviceGetCount(&count); r != cu::kSuccess || count == 0) {
    dx.no_gpu = r != cu::kSuccess ? "cuDeviceGetCount failed: " + driver->describe(r)
                                  : std::string("the NVIDIA driver reports no GPU");
    add(dx, "driver", dx.no_gpu, kFaultyGpu);
  }
  if (!binary.cuda && count > 0) {
    add(dx, "binary", "this lpx-pipeline was built without CUDA, so it cannot use any GPU",
        "install the CUDA toolkit and rebuild: cmake -S . -B build -DLPX_CUDA=ON && cmake --build "
        "build");
  }
  for (int i = 0; i < count; ++i) check_gpu(dx, *driver, nvml.get(), i);
  summarise(dx);
  return dx;
}

}  // namespace lpx::gpu
