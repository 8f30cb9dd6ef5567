// `lpx-pipeline doctor`: the GPU health check. The end-to-end tests hold on any machine: without a
// GPU they check the "no NVIDIA GPU" report and its advice, with one they check that the GPU was
// found, ran the test kernel and had its bandwidth measured. The rules doctor applies (kernel
// images, driver versions, /proc parsing) are tested directly, since most machines show only one
// case of each.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>

#include "gpu/compatibility.hpp"
#include "gpu/device_checks.hpp"
#include "gpu/host_facts.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;
using gpu::KernelImageKind;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool driver_loads() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

// A machine doctor should find a GPU on: the driver's control node and its library are there.
bool gpu_machine() { return fs::exists("/dev/nvidiactl") && driver_loads(); }

boost::json::object doctor_json() {
  CommandResult r = run_lpx({"doctor", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  boost::json::value v = boost::json::parse(r.out);
  return v.as_object();
}

TEST(CliDoctor, ReportsTheMachineItRunsOn) {
  CommandResult r = run_lpx({"doctor"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "LPX ")) << r.out;
  EXPECT_TRUE(contains(r.out, "CUDA build")) << r.out;
  if (!gpu_machine()) {
    EXPECT_TRUE(contains(r.out, "no NVIDIA GPU: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "advice: ")) << r.out;
    EXPECT_TRUE(contains(r.out, "\nno usable GPU: ")) << r.out;
    if (!driver_loads()) {
      EXPECT_TRUE(contains(r.out, "no NVIDIA driver found (libcuda.so.1 not loadable)")) << r.out;
      EXPECT_TRUE(contains(r.out, "install the NVIDIA driver")) << r.out;
      EXPECT_TRUE(contains(r.out, "--gpus all")) << r.out;
    }
    return;
  }
  EXPECT_TRUE(contains(r.out, "GPU 0 ")) << r.out;
  EXPECT_TRUE(contains(r.out, "capability ")) << r.out;
  EXPECT_TRUE(contains(r.out, "OK: saxpy on ")) << r.out;
  EXPECT_TRUE(contains(r.out, "GB/s device-to-device copy (read + write bytes counted")) << r.out;
  const bool cuda_build = doctor_json().at("binary").at("cuda").as_bool();
  EXPECT_TRUE(contains(r.out, cuda_build ? "\nOK: " : "built without CUDA")) << r.out;
}

TEST(CliDoctor, RequireGpuExitsOneExactlyWhenNoGpuIsUsable) {
  const boost::json::object report = doctor_json();
  const bool usable = report.at("usable").as_bool();
  CommandResult r = run_lpx({"doctor", "--require-gpu"});
  EXPECT_EQ(r.exit_code, usable ? 0 : 1) << r.out;
  if (gpu_machine() && report.at("binary").at("cuda").as_bool()) {
    EXPECT_TRUE(usable) << r.out;
    EXPECT_EQ(r.exit_code, 0) << r.out;
  }
  if (!gpu_machine()) {
    EXPECT_EQ(r.exit_code, 1) << r.out;
  }
}

TEST(CliDoctor, JsonHasTheSameFacts) {
  const boost::json::object report = doctor_json();
  for (const char* key : {"lpx_version", "binary", "system", "driver", "gpus", "problems", "usable",
                          "usable_gpus", "summary"}) {
    EXPECT_TRUE(report.contains(key)) << key;
  }
  const boost::json::array& gpus = report.at("gpus").as_array();
  if (!gpu_machine()) {
    EXPECT_TRUE(gpus.empty());
    EXPECT_FALSE(report.at("usable").as_bool());
    EXPECT_EQ(report.at("usable_gpus").as_int64(), 0);
    EXPECT_TRUE(report.at("no_gpu").is_string());
    EXPECT_EQ(report.at("summary").as_string().subview().rfind("no usable GPU: ", 0), 0u);
    if (!driver_loads()) {
      EXPECT_FALSE(report.at("driver").at("loaded").as_bool());
    }
    ASSERT_FALSE(report.at("problems").as_array().empty());
    EXPECT_FALSE(report.at("problems").as_array()[0].at("advice").as_string().empty());
    return;
  }
  ASSERT_FALSE(gpus.empty());
  const boost::json::object& gpu0 = gpus[0].as_object();
  EXPECT_FALSE(gpu0.at("name").as_string().empty());
  EXPECT_GT(gpu0.at("memory_total_bytes").to_number<double>(), 0);
  EXPECT_TRUE(gpu0.at("sanity").at("ok").as_bool()) << gpu0.at("sanity");
  EXPECT_GT(gpu0.at("bandwidth").at("gb_per_s").to_number<double>(), 1.0);
}

// dlopen finds LD_LIBRARY_PATH's libcuda.so.1 first, so this runs the stub on any machine.
TEST(CliDoctor, RecognisesTheToolkitsStubLibrary) {
  fs::path stub;
  for (const char* candidate :
       {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so",
        "/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so"}) {
    if (fs::exists(candidate)) stub = candidate;
  }
  if (stub.empty()) GTEST_SKIP() << "no CUDA toolkit stub library here";
  TempDir dir;
  fs::create_symlink(stub, dir / "libcuda.so.1");
  CommandResult r = run_command({LPX_PIPELINE_BINARY, "doctor", "--require-gpu"},
                                {{"LD_LIBRARY_PATH", dir.path().string()}});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_TRUE(contains(r.out, "stub library")) << r.out;
  EXPECT_TRUE(contains(r.out, "LD_LIBRARY_PATH")) << r.out;
}

// The sanity kernel is hand-written PTX: ptxas, where a toolkit is installed, proves it assembles
// for old and new GPUs alike.
TEST(CliDoctor, SanityKernelPtxAssembles) {
  const fs::path ptxas = "/usr/local/cuda/bin/ptxas";
  if (!fs::exists(ptxas)) GTEST_SKIP() << "no ptxas here";
  TempDir dir;
  write_file(dir / "saxpy.ptx", gpu::sanity_kernel_ptx());
  for (const char* arch : {"sm_75", "sm_80", "sm_90"}) {
    CommandResult r =
        run_command({ptxas.string(), std::string("-arch=") + arch, (dir / "saxpy.ptx").string(),
                     "-o", (dir / "saxpy.cubin").string()});
    EXPECT_EQ(r.exit_code, 0) << arch << ": " << r.err;
  }
}

TEST(GpuCompatibility, ParsesCMakeArchitectureLists) {
  const gpu::CudaArchList list =
      gpu::parse_cuda_architectures("80-real;86-real, 90;100a-virtual;native");
  ASSERT_TRUE(list.cuda);
  ASSERT_EQ(list.archs.size(), 4u);
  EXPECT_TRUE(list.archs[0].sass && !list.archs[0].ptx);
  EXPECT_TRUE(list.archs[2].sass && list.archs[2].ptx);
  EXPECT_EQ(list.archs[3].number, 100);
  EXPECT_EQ(list.archs[3].variant, 'a');
  EXPECT_TRUE(!list.archs[3].sass && list.archs[3].ptx);
  EXPECT_EQ(list.unresolved, std::vector<std::string>{"native"});
  EXPECT_EQ(gpu::describe(list), "sm_80 sm_86 sm_90 (SASS), compute_90 compute_100a (PTX), native");
  EXPECT_FALSE(gpu::parse_cuda_architectures("disabled").cuda);
  EXPECT_EQ(gpu::describe(gpu::parse_cuda_architectures("disabled")), "disabled");
}

TEST(GpuCompatibility, PicksTheImageTheDriverWouldLoad) {
  const auto image = [](const char* list, int major, int minor) {
    return gpu::find_kernel_image(gpu::parse_cuda_architectures(list), major, minor);
  };
  // A cubin runs on later minor versions of its major only.
  EXPECT_EQ(image("80-real", 8, 6).kind, KernelImageKind::sass);
  EXPECT_EQ(image("80-real", 9, 0).kind, KernelImageKind::none);
  EXPECT_EQ(image("86-real", 8, 0).kind, KernelImageKind::none);
  // The newest matching cubin wins, and a cubin wins over PTX.
  EXPECT_EQ(image("80-real;86-real;89", 8, 9).arch, 89);
  EXPECT_EQ(image("80-real;86-real;89", 8, 9).kind, KernelImageKind::sass);
  EXPECT_EQ(image("80-real;86-real;89", 8, 7).arch, 86);
  // PTX is JIT-compiled for any later GPU, never an earlier one.
  EXPECT_EQ(image("80-real;86-real;89-real;90", 12, 0).kind, KernelImageKind::ptx);
  EXPECT_EQ(image("80-real;86-real;89-real;90", 12, 0).arch, 90);
  EXPECT_EQ(image("90-virtual", 8, 9).kind, KernelImageKind::none);
  // Arch-specific images run on exactly their GPU; family ones on the family.
  EXPECT_EQ(image("90a", 9, 0).kind, KernelImageKind::sass);
  EXPECT_EQ(image("90a", 10, 0).kind, KernelImageKind::none);
  EXPECT_EQ(image("100f-real", 10, 3).kind, KernelImageKind::sass);
  EXPECT_EQ(gpu::arch_name(image("100f-real", 10, 3)), "100f");
  // Lists CMake resolves only at build time.
  EXPECT_EQ(image("native", 9, 0).kind, KernelImageKind::unknown);
  EXPECT_EQ(image("75;native", 9, 0).kind, KernelImageKind::ptx);
}

TEST(GpuCompatibility, ComparesDriverAndToolkitVersions) {
  EXPECT_EQ(gpu::parse_cuda_version("13.0.88"), (gpu::CudaVersion{13, 0}));
  EXPECT_EQ(gpu::parse_cuda_version("12.4"), (gpu::CudaVersion{12, 4}));
  EXPECT_FALSE(gpu::parse_cuda_version(""));
  EXPECT_FALSE(gpu::parse_cuda_version("13"));
  EXPECT_EQ(gpu::driver_cuda_version(13000), (gpu::CudaVersion{13, 0}));
  EXPECT_EQ(gpu::driver_cuda_version(12080), (gpu::CudaVersion{12, 8}));
  EXPECT_EQ(gpu::to_string(gpu::driver_cuda_version(12020)), "12.2");
  EXPECT_EQ(gpu::driver_fit({13, 0}, {13, 0}), gpu::DriverFit::ok);
  EXPECT_EQ(gpu::driver_fit({13, 1}, {12, 8}), gpu::DriverFit::ok);
  EXPECT_EQ(gpu::driver_fit({13, 0}, {13, 1}), gpu::DriverFit::minor_older);
  EXPECT_EQ(gpu::driver_fit({12, 9}, {13, 0}), gpu::DriverFit::too_old);
}

TEST(GpuHostFacts, ReadsModulesDriverVersionAndDeviceNodes) {
  TempDir root;
  fs::create_directories(root / "proc/driver/nvidia");
  fs::create_directories(root / "dev");
  write_file(root / "proc/modules",
             "snd 1 0 - Live 0x0\nnouveau 2306048 0 - Live 0x0000000000000000\nnvidia_uvm 1 0 - "
             "Live 0x0\n");
  write_file(
      root / "proc/driver/nvidia/version",
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun Jul 27 07:09:50 UTC 2025\n"
      "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  write_file(root / "dev/nvidiactl", "");
  write_file(root / "dev/nvidia0", "");
  write_file(root / "dev/null", "");
  const gpu::HostFacts facts = gpu::read_host_facts(root.path());
  EXPECT_TRUE(facts.nouveau_loaded);
  EXPECT_TRUE(facts.nvidia_module_loaded);
  EXPECT_EQ(facts.nvidia_module_version, "580.65.06");
  EXPECT_EQ(facts.device_nodes, (std::vector<std::string>{"/dev/nvidia0", "/dev/nvidiactl"}));

  TempDir empty;
  write_file(empty / "proc_modules_is_absent", "");
  const gpu::HostFacts none = gpu::read_host_facts(empty.path());
  EXPECT_FALSE(none.nouveau_loaded);
  EXPECT_FALSE(none.nvidia_module_loaded);
  EXPECT_FALSE(none.has_device_nodes());
}

TEST(GpuHostFacts, ReadsTheOpenKernelModulesVersion) {
  TempDir root;
  fs::create_directories(root / "proc/driver/nvidia");
  write_file(root / "proc/driver/nvidia/version",
             "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06  Release Build  "
             "(dvs-builder@U16)\n");
  EXPECT_EQ(gpu::read_host_facts(root.path()).nvidia_module_version, "580.65.06");
}

TEST(GpuHostFacts, NvidiaModulesAreNotNouveau) {
  TempDir root;
  fs::create_directories(root / "proc");
  write_file(root / "proc/modules", "nvidia 1 0 - Live 0x0\nnouveau_fake_name 1 0 - Live 0x0\n");
  EXPECT_FALSE(gpu::read_host_facts(root.path()).nouveau_loaded);
}

}  // namespace
}  // namespace lpx::test
