// `lpx-pipeline doctor [--require-gpu] [--json]`: can this binary use this machine's GPUs, and if
// not, why not and what to do. Works on every machine: the driver and NVML are loaded at run time
// (core/app/gpu), so a machine without them gets a clear "no NVIDIA GPU" and exit 0 (1 with
// --require-gpu). docs/doctor.md explains every line and every piece of advice.
#include <boost/json.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "cli/build_info.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "gpu/diagnosis.hpp"

// Set for this file by core/CMakeLists.txt.
#ifndef LPX_DOCTOR_CUDA
#define LPX_DOCTOR_CUDA 0
#endif
#ifndef LPX_DOCTOR_CUDA_TOOLKIT
#define LPX_DOCTOR_CUDA_TOOLKIT ""
#endif
#ifndef LPX_DOCTOR_CUDA_ARCHITECTURES
#define LPX_DOCTOR_CUDA_ARCHITECTURES "disabled"
#endif

namespace lpx::cli {
namespace {

using gpu::Diagnosis;
using gpu::GpuFacts;
using gpu::HostFacts;
using gpu::KernelImageKind;

constexpr std::size_t kLabelWidth = 13;

void line(std::ostream& out, const std::string& label, const std::string& text) {
  out << label << std::string(label.size() < kLabelWidth ? kLabelWidth - label.size() : 1, ' ')
      << text << "\n";
}

// `text` after `prefix`, wrapped at 100 columns, continuation lines indented like the first.
void wrapped(std::ostream& out, const std::string& prefix, const std::string& text) {
  constexpr std::size_t kWidth = 100;
  const std::string indent(prefix.size(), ' ');
  std::string current = prefix;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (current.size() > indent.size() && current.size() + 1 + word.size() > kWidth) {
      out << current << "\n";
      current = indent;
    }
    if (current.size() > indent.size()) current += ' ';
    current += word;
    start = end + 1;
  }
  out << current << "\n";
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string gib(std::uint64_t bytes) {
  return fixed(static_cast<double>(bytes) / (1ULL << 30), 1) + " GiB";
}

template <class T>
std::string or_unavailable(const std::optional<T>& value, const std::string& unit) {
  return value ? std::to_string(*value) + unit : "unavailable";
}

std::string kernel_image_text(const Diagnosis& dx, const GpuFacts& g) {
  if (!g.kernel_image) return "none: this binary was built without CUDA";
  const std::string arch = gpu::arch_name(*g.kernel_image);
  switch (g.kernel_image->kind) {
    case KernelImageKind::sass:
      return "sm_" + arch + " cubin (SASS)";
    case KernelImageKind::ptx:
      return "compute_" + arch + " PTX, JIT-compiled when first loaded (slow first start)";
    case KernelImageKind::unknown:
      return "cannot tell: the build's architectures are '" + dx.binary.cuda_architectures + "'";
    case KernelImageKind::none:
      break;
  }
  return "none for sm_" + std::to_string(g.cc_major) + std::to_string(g.cc_minor);
}

std::string driver_text(const Diagnosis& dx) {
  const gpu::DriverFacts& d = dx.driver;
  if (!d.loaded) return "not found: " + d.load_error;
  std::string text = d.driver_version.empty() ? "" : d.driver_version + ", ";
  text += d.cuda_version ? "CUDA " + gpu::to_string(*d.cuda_version) : "CUDA version unknown";
  text += " (" + d.library_path + ")";
  if (!d.initialised) return text + "; cuInit failed: " + d.init_error;
  if (d.fit == gpu::DriverFit::ok) text += "; new enough for this binary's toolkit";
  if (d.fit == gpu::DriverFit::minor_older) text += "; older than this binary's toolkit (minor)";
  if (d.fit == gpu::DriverFit::too_old) text += "; too old for this binary's toolkit";
  return text;
}

void print_gpu(std::ostream& out, const Diagnosis& dx, const GpuFacts& g) {
  line(out, "GPU " + std::to_string(g.index),
       g.name + (g.pci_bus_id.empty() ? "" : " (" + g.pci_bus_id + ")"));
  line(out, "  compute",
       "capability " + std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor) + ", " +
           std::to_string(g.sm_count) + " SMs");
  line(out, "  memory",
       gib(g.memory_total_bytes) + " total, " +
           (g.memory_free_bytes ? gib(*g.memory_free_bytes) : "unknown") + " free");
  if (!dx.driver.nvml_loaded) {
    line(out, "  clocks", "unavailable (NVML: libnvidia-ml.so.1 not loadable)");
    line(out, "  sensors", "unavailable (NVML: libnvidia-ml.so.1 not loadable)");
  } else if (!g.nvml.error.empty()) {
    line(out, "  clocks", "unavailable (" + g.nvml.error + ")");
    line(out, "  sensors", "unavailable (" + g.nvml.error + ")");
  } else {
    const gpu::NvmlReadings& n = g.nvml;
    line(out, "  clocks",
         "SM " + or_unavailable(n.sm_clock_mhz, "") + " of " +
             or_unavailable(n.sm_clock_max_mhz, " MHz") + ", memory " +
             or_unavailable(n.memory_clock_mhz, "") + " of " +
             or_unavailable(n.memory_clock_max_mhz, " MHz"));
    const auto watts = [](const std::optional<double>& w) {
      return w ? fixed(*w, 0) + " W" : std::string("unavailable");
    };
    line(out, "  sensors",
         or_unavailable(n.temperature_c, " C") + ", power " + watts(n.power_w) + ", limit " +
             watts(n.power_limit_w));
  }
  line(out, "  kernels", kernel_image_text(dx, g));
  line(out, "  test",
       g.sanity.ok ? "OK: saxpy on " + std::to_string(g.sanity.elements) +
                         " floats (embedded PTX), identical to the CPU's"
                   : "FAILED: " + g.sanity.error);
  if (g.bandwidth.gigabytes_per_second) {
    line(out, "  bandwidth",
         fixed(*g.bandwidth.gigabytes_per_second, 1) +
             " GB/s device-to-device copy (read + write bytes counted; " +
             std::to_string(g.bandwidth.bytes >> 20) + " MiB, best of " +
             std::to_string(g.bandwidth.repetitions) + ")");
  } else if (g.sanity.ok) {
    line(out, "  bandwidth", "not measured: " + g.bandwidth.error);
  }
  line(out, "  usable", g.usable ? "yes" : "no");
}

void print_text(std::ostream& out, const Diagnosis& dx) {
  line(out, "LPX", dx.binary.version);
  line(out, "CUDA build",
       dx.binary.cuda
           ? "toolkit " + dx.binary.cuda_toolkit + "; kernels: " + gpu::describe(dx.architectures)
           : "no (built without the CUDA toolkit)");
  line(out, "driver", driver_text(dx));
  line(out, "NVML", dx.driver.nvml_loaded ? "loaded" : "unavailable: " + dx.driver.nvml_error);
  std::string nodes;
  for (const std::string& node : dx.host.device_nodes) nodes += (nodes.empty() ? "" : " ") + node;
  line(out, "device nodes", nodes.empty() ? "none (no /dev/nvidia*)" : nodes);
  const HostFacts& host = dx.host;
  std::string modules = host.nvidia_module_loaded ? "nvidia loaded" : "nvidia not loaded";
  if (!host.nvidia_module_version.empty()) modules += " (" + host.nvidia_module_version + ")";
  modules += host.nouveau_loaded ? "; nouveau LOADED" : "; nouveau not loaded";
  if (host.in_container) modules += "; running in a container";
  line(out, "modules", modules);
  for (const GpuFacts& g : dx.gpus) {
    out << "\n";
    print_gpu(out, dx, g);
  }
  out << "\n";
  for (const gpu::Finding& f : dx.findings) {
    const bool no_gpu = !dx.no_gpu.empty() && f.problem == dx.no_gpu;
    wrapped(out, no_gpu ? "no NVIDIA GPU: " : "problem (" + f.subject + "): ", f.problem);
    wrapped(out, "  advice: ", f.advice);
  }
  if (!dx.findings.empty()) out << "\n";
  out << dx.summary << "\n";
}

boost::json::value optional_string(const std::string& s) {
  return s.empty() ? boost::json::value() : boost::json::value(s);
}

template <class T>
boost::json::value optional_value(const std::optional<T>& v) {
  return v ? boost::json::value(*v) : boost::json::value();
}

const char* kind_name(KernelImageKind kind) {
  switch (kind) {
    case KernelImageKind::sass:
      return "sass";
    case KernelImageKind::ptx:
      return "ptx";
    case KernelImageKind::unknown:
      return "unknown";
    case KernelImageKind::none:
      break;
  }
  return "none";
}

boost::json::object gpu_json(const GpuFacts& g) {
  const gpu::NvmlReadings& n = g.nvml;
  boost::json::value image;
  if (g.kernel_image)
    image = boost::json::object{{"kind", kind_name(g.kernel_image->kind)},
                                {"arch", gpu::arch_name(*g.kernel_image)}};
  return {
      {"index", g.index},
      {"name", g.name},
      {"pci_bus_id", g.pci_bus_id},
      {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
      {"sm_count", g.sm_count},
      {"memory_total_bytes", g.memory_total_bytes},
      {"memory_free_bytes", optional_value(g.memory_free_bytes)},
      {"clocks_mhz", boost::json::object{{"sm", optional_value(n.sm_clock_mhz)},
                                         {"sm_max", optional_value(n.sm_clock_max_mhz)},
                                         {"memory", optional_value(n.memory_clock_mhz)},
                                         {"memory_max", optional_value(n.memory_clock_max_mhz)}}},
      {"temperature_c", optional_value(n.temperature_c)},
      {"power_w", optional_value(n.power_w)},
      {"power_limit_w", optional_value(n.power_limit_w)},
      {"telemetry_error", optional_string(n.error)},
      {"kernel_image", image},
      {"sanity", boost::json::object{{"ok", g.sanity.ok},
                                     {"elements", g.sanity.elements},
                                     {"error", optional_string(g.sanity.error)}}},
      {"bandwidth",
       boost::json::object{{"gb_per_s", optional_value(g.bandwidth.gigabytes_per_second)},
                           {"counts", "read + write bytes of a device-to-device copy"},
                           {"bytes", g.bandwidth.bytes},
                           {"best_of", g.bandwidth.repetitions},
                           {"error", optional_string(g.bandwidth.error)}}},
      {"usable", g.usable}};
}

void print_json(std::ostream& out, const Diagnosis& dx) {
  const gpu::DriverFacts& d = dx.driver;
  boost::json::value fit;
  if (d.fit)
    fit = *d.fit == gpu::DriverFit::ok        ? "ok"
          : *d.fit == gpu::DriverFit::too_old ? "too_old"
                                              : "minor_older";
  boost::json::array nodes(dx.host.device_nodes.begin(), dx.host.device_nodes.end());
  boost::json::array gpus;
  for (const GpuFacts& g : dx.gpus) gpus.push_back(gpu_json(g));
  boost::json::array problems;
  for (const gpu::Finding& f : dx.findings) {
    problems.push_back(
        boost::json::object{{"subject", f.subject}, {"problem", f.problem}, {"advice", f.advice}});
  }
  const boost::json::object root{
      {"lpx_version", dx.binary.version},
      {"binary", boost::json::object{{"cuda", dx.binary.cuda},
                                     {"cuda_toolkit", optional_string(dx.binary.cuda_toolkit)},
                                     {"cuda_architectures", dx.binary.cuda_architectures},
                                     {"kernel_images", gpu::describe(dx.architectures)}}},
      {"system",
       boost::json::object{
           {"nouveau_loaded", dx.host.nouveau_loaded},
           {"nvidia_module_loaded", dx.host.nvidia_module_loaded},
           {"nvidia_module_version", optional_string(dx.host.nvidia_module_version)},
           {"device_nodes", std::move(nodes)},
           {"in_container", dx.host.in_container},
           {"cuda_visible_devices", optional_value(dx.host.cuda_visible_devices)}}},
      {"driver",
       boost::json::object{
           {"loaded", d.loaded},
           {"library", optional_string(d.library_path)},
           {"load_error", optional_string(d.load_error)},
           {"initialised", d.initialised},
           {"init_error", optional_string(d.init_error)},
           {"version", optional_string(d.driver_version)},
           {"cuda_version", d.cuda_version ? boost::json::value(gpu::to_string(*d.cuda_version))
                                           : boost::json::value()},
           {"fit", fit},
           {"nvml_loaded", d.nvml_loaded},
           {"nvml_error", optional_string(d.nvml_error)}}},
      {"gpus", std::move(gpus)},
      {"problems", std::move(problems)},
      {"no_gpu", optional_string(dx.no_gpu)},
      {"usable_gpus", dx.usable_gpus},
      {"usable", dx.usable_gpus > 0},
      {"summary", dx.summary}};
  out << boost::json::serialize(root) << "\n";
}

}  // namespace

int doctor_command(const DoctorArguments& arguments) {
  gpu::BinaryFacts binary;
  binary.version = build_info().version;
  binary.cuda = LPX_DOCTOR_CUDA != 0;
  binary.cuda_toolkit = LPX_DOCTOR_CUDA_TOOLKIT;
  binary.cuda_architectures = LPX_DOCTOR_CUDA_ARCHITECTURES;
  const Diagnosis dx = gpu::diagnose(binary);
  if (arguments.json) {
    print_json(std::cout, dx);
  } else {
    print_text(std::cout, dx);
  }
  return arguments.require_gpu && dx.usable_gpus == 0 ? kExitRuntimeError : kExitOk;
}

Command add_doctor_command(CLI::App& parent) {
  auto doctor = std::make_shared<DoctorArguments>();
  CLI::App* doctor_app = parent.add_subcommand(
      "doctor", "Check the NVIDIA driver and GPUs: can this binary use them, and if not, why");
  doctor_app->add_flag("--require-gpu", doctor->require_gpu, "Exit 1 when no GPU is usable");
  doctor_app->add_flag("--json", doctor->json, "One JSON object instead of the report");
  return {doctor_app, [doctor] {
    return doctor_command(*doctor);
  }};
}

}  // namespace lpx::cli
