#include "cli/device_choice.hpp"

#include <spdlog/spdlog.h>

namespace lpx::cli {

core::Expected<std::string> backend_for_device(const std::string& device, const std::string& backend,
                                               core::PluginRegistry& registry) {
  if (!backend.empty()) return backend;
  if (device == "cpu") return std::string("cpu");
  const bool has_cuda = registry.load("cuda").has_value();
  if (device == "auto") {
    if (has_cuda) {
      spdlog::info("device auto: using the cuda backend");
      return std::string("cuda");
    }
    spdlog::info("device auto: no CUDA backend plugin is installed; using cpu");
    return std::string("cpu");
  }
  // "cuda" or "cuda:N"
  if (!has_cuda) {
    return core::unexpected("--device " + device +
                            ": this installation has no CUDA backend plugin ('cuda'); use "
                            "--device cpu");
  }
  return std::string("cuda");
}

std::string check_device(const std::string& d) {
  if (d == "cpu" || d == "cuda" || d == "auto") return {};
  if (d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.find_first_not_of("0123456789", 5) == std::string::npos) {
    return {};
  }
  return "must be cpu, cuda, cuda:N or auto, not '" + d + "'";
}

}  // namespace lpx::cli
