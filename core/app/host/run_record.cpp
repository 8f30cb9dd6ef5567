#include "host/run_record.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>

#include <boost/json.hpp>

#include "gpu/cuda_driver.hpp"
#include "gpu/host_facts.hpp"
#include "gpu/nvml.hpp"
#include "host/host_cpu.hpp"
#include "pipeline/pipeline_text.hpp"
#include "util/model_path.hpp"

namespace lpx::host {
namespace {

namespace json = boost::json;

std::string os_release_name() {
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      std::string value = line.substr(12);
      if (value.size() >= 2 && value.front() == '"') value = value.substr(1, value.size() - 2);
      return value;
    }
  }
  return "unknown";
}

json::object os_record() {
  utsname u{};
  uname(&u);
  char hostname[256] = {};
  gethostname(hostname, sizeof hostname - 1);
  return {{"name", os_release_name()},
          {"kernel", std::string(u.sysname) + " " + u.release},
          {"machine", u.machine},
          {"hostname", hostname}};
}

json::object cpu_record(const core::Pipeline& pipeline) {
  json::object cpu{{"model", cpu_model_name()},
                   {"isa", cpu_isa()},
                   {"cores", static_cast<std::int64_t>(sysconf(_SC_NPROCESSORS_ONLN))}};
  const core::PipelineSection* backend = pipeline.find("backend");
  const std::string plugin = backend ? backend->plugin->description().name : "cpu";
  cpu["backend"] = plugin;
  cpu["backend_options"] = backend ? describe_backend_options(plugin, backend->options.values) : std::string();
  return cpu;
}

// Only where the NVIDIA kernel module is loaded: elsewhere no driver library is touched.
json::object gpu_record(const BuildFacts& build) {
  json::object gpu{{"cuda_build", build.cuda}, {"driver", nullptr}, {"cuda_driver", nullptr},
                   {"devices", json::array()}};
  const gpu::HostFacts facts = gpu::read_host_facts();
  if (!facts.nvidia_module_loaded) return gpu;
  if (!facts.nvidia_module_version.empty()) gpu["driver"] = facts.nvidia_module_version;
  if (auto nvml = gpu::Nvml::load()) {
    if (const std::string version = (*nvml)->driver_version(); !version.empty()) gpu["driver"] = version;
  }
  auto driver = gpu::CudaDriver::load();
  if (!driver || (*driver)->cuInit(0) != gpu::cu::kSuccess) return gpu;
  int version = 0;
  if ((*driver)->cuDriverGetVersion(&version) == gpu::cu::kSuccess) gpu["cuda_driver"] = gpu::cuda_version_text(version);
  int count = 0;
  if ((*driver)->cuDeviceGetCount(&count) != gpu::cu::kSuccess) return gpu;
  json::array devices;
  for (int i = 0; i < count; ++i) {
    gpu::CUdevice device = 0;
    char name[256] = {};
    std::size_t memory = 0;
    if ((*driver)->cuDeviceGet(&device, i) != gpu::cu::kSuccess) continue;
    (*driver)->cuDeviceGetName(name, sizeof name - 1, device);
    (*driver)->cuDeviceTotalMem(&memory, device);
    devices.push_back(json::object{{"index", i}, {"name", name}, {"memory_bytes", memory}});
  }
  gpu["devices"] = std::move(devices);
  return gpu;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

core::Expected<std::string> run_record_json(const core::Pipeline& pipeline, const BuildFacts& build) {
  json::array models;
  for (const core::PipelineSection& section : pipeline.sections) {
    if (section.slot != "model" && section.slot != "models") continue;
    const auto& values = section.core_options.values;
    const std::string path = std::get<std::string>(values.at("path"));
    auto sha256 = core::model_sha256(path);
    if (!sha256) return core::unexpected(sha256.error());
    const auto name = values.find("name");
    models.push_back(json::object{
        {"name", name != values.end() ? std::get<std::string>(name->second)
                                      : std::filesystem::path(path).stem().string()},
        {"path", path},
        {"bytes", core::model_bytes(path)},
        {"sha256", *sha256}});
  }
  json::object record{{"lpx", json::object{{"version", build.version}, {"commit", build.commit}}},
                      {"started_at", utc_now()},
                      {"os", os_record()},
                      {"cpu", cpu_record(pipeline)},
                      {"gpu", gpu_record(build)},
                      {"models", std::move(models)},
                      {"pipeline", core::resolved_pipeline_toml(pipeline)}};
  return json::serialize(record);
}

}  // namespace lpx::host
