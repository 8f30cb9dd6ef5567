#include "host/host_cpu.hpp"

#include <fstream>

#include "cpu/cpu_features.hpp"
#include "cpu/kernel_set.hpp"

namespace lpx::host {

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    const std::size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string("unknown CPU") : line.substr(start);
  }
  return "unknown CPU";
}

std::string cpu_isa() { return kernels::cpu::cpu_features().describe(); }

std::string cpu_kernels(const std::string& requested) {
  std::string why;
  const kernels::cpu::KernelSet* set = kernels::cpu::choose_kernel_set(requested, why);
  if (set == nullptr) return requested + " (not runnable here)";
  return requested == "auto" ? std::string(set->name) + " (auto)" : std::string(set->name);
}

}  // namespace lpx::host
