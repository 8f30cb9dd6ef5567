#include "gpu/host_facts.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>

namespace lpx::gpu {
namespace {

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool lists_module(const std::string& proc_modules, const std::string& name) {
  std::istringstream lines(proc_modules);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(name + " ", 0) == 0) return true;
  }
  return false;
}

}  // namespace

HostFacts read_host_facts(const std::filesystem::path& root) {
  namespace fs = std::filesystem;
  HostFacts facts;
  facts.nouveau_loaded = lists_module(read_text(root / "proc/modules"), "nouveau");

  std::error_code error;
  const fs::path version_file = root / "proc/driver/nvidia/version";
  if (fs::exists(version_file, error)) {
    facts.nvidia_module_loaded = true;
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 ..." or
    // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build ..."
    static const std::regex version(R"(Kernel Module.*?\s([0-9]+\.[0-9]+(\.[0-9]+)?)(\s|$))");
    std::smatch match;
    const std::string text = read_text(version_file);
    if (std::regex_search(text, match, version)) facts.nvidia_module_version = match[1];
  }

  for (const auto& entry : fs::directory_iterator(root / "dev", error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("nvidia", 0) == 0) facts.device_nodes.push_back("/dev/" + name);
  }
  std::sort(facts.device_nodes.begin(), facts.device_nodes.end());

  const std::string cgroup = read_text(root / "proc/1/cgroup");
  facts.in_container =
      fs::exists(root / ".dockerenv", error) || fs::exists(root / "run/.containerenv", error) ||
      std::getenv("KUBERNETES_SERVICE_HOST") != nullptr ||
      cgroup.find("docker") != std::string::npos || cgroup.find("kubepods") != std::string::npos ||
      cgroup.find("containerd") != std::string::npos;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
    facts.cuda_visible_devices = visible;
  return facts;
}

}  // namespace lpx::gpu
