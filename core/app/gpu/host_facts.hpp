// What the operating system says about NVIDIA GPUs, read from /proc, /dev and the environment,
// before any driver library is touched: kernel modules, device nodes, container hints.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lpx::gpu {

struct HostFacts {
  bool nouveau_loaded = false;                      // /proc/modules lists nouveau
  bool nvidia_module_loaded = false;                // /proc/driver/nvidia/version exists
  std::string nvidia_module_version;                // "580.65.06", from that file
  std::vector<std::string> device_nodes;            // "/dev/nvidiactl", "/dev/nvidia0"..., sorted
  bool in_container = false;                        // a Docker/Podman/Kubernetes hint was found
  std::optional<std::string> cuda_visible_devices;  // the variable, when set

  bool has_device_nodes() const { return !device_nodes.empty(); }
};

// Reads the facts under `root` ("/" normally; tests pass a fake tree) and the environment.
HostFacts read_host_facts(const std::filesystem::path& root = "/");

}  // namespace lpx::gpu
