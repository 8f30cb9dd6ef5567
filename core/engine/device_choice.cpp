#include "engine/device_choice.hpp"

#include <spdlog/spdlog.h>

#include "engine/engine_builder.hpp"

namespace lpx::core {
namespace {

// The cuda plugin opened on GPU `index` and closed again: creating it is the check (driver,
// runtime, device, kernel image). The error says why CUDA cannot be used.
Expected<BackendChoice> probe_cuda(std::int64_t index, PluginRegistry& registry) {
  if (auto plugin = registry.load("cuda"); !plugin) {
    if (plugin.error().code == LPX_ERR_NOT_FOUND) {
      return unsupported(std::string(
          "this build of LPX has no CUDA backend plugin ('cuda'; it is built when the CUDA "
          "toolkit is found at configure time)"));
    }
    // Present but not loadable, e.g. the CUDA toolkit's cuBLAS missing on this machine.
    return unexpected(plugin.error().prefixed("the CUDA backend plugin cannot be loaded: "));
  }
  BackendChoice choice{"cuda", {{"gpu", index}}};
  auto instance = default_instance(registry, "cuda", choice.options);
  if (!instance) return unexpected(instance.error());
  return choice;
}

}  // namespace

Expected<BackendChoice> backend_for_device(const std::string& device,
                                                 const std::string& backend,
                                                 PluginRegistry& registry) {
  if (!backend.empty()) return BackendChoice{backend, {}};
  if (device == "cpu") return BackendChoice{"cpu", {}};
  if (device == "auto") {
    auto cuda = probe_cuda(0, registry);
    if (cuda) {
      spdlog::info("device auto: a CUDA GPU is usable; using the cuda backend on cuda:0");
      return cuda;
    }
    spdlog::info("device auto: using cpu ({})", cuda.error().message);
    return BackendChoice{"cpu", {}};
  }
  // "cuda" or "cuda:N"
  const std::int64_t index = device.size() > 5 ? std::stoll(device.substr(5)) : 0;
  auto cuda = probe_cuda(index, registry);
  if (!cuda) return unexpected(cuda.error().with_context("--device " + device));
  return cuda;
}

std::string check_device(const std::string& d) {
  if (d == "cpu" || d == "cuda" || d == "auto") return {};
  if (d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.size() < 10 &&
      d.find_first_not_of("0123456789", 5) == std::string::npos) {
    return {};
  }
  return "must be cpu, cuda, cuda:N or auto, not '" + d + "'";
}

}  // namespace lpx::core
