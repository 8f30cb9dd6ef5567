#include "cpu/cpu_features.hpp"

#include <sched.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace lpx::kernels::cpu {
namespace {

CpuFeatures detect() noexcept {
  CpuFeatures f;
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return f;
  f.fma = (ecx & (1u << 12)) != 0;
  f.f16c = (ecx & (1u << 29)) != 0;
  const bool osxsave = (ecx & (1u << 27)) != 0;
  const bool avx = (ecx & (1u << 28)) != 0;
  if (osxsave && avx) {
    unsigned xcr0_low = 0, xcr0_high = 0;
    __asm__("xgetbv" : "=a"(xcr0_low), "=d"(xcr0_high) : "c"(0));
    f.os_avx = (xcr0_low & 0x6u) == 0x6u;       // SSE and AVX state
    f.os_avx512 = (xcr0_low & 0xE6u) == 0xE6u;  // and opmask, upper ZMM0-15, ZMM16-31
  }
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) != 0) {
    f.avx2 = (ebx & (1u << 5)) != 0;
    f.avx512f = (ebx & (1u << 16)) != 0;
    f.avx512dq = (ebx & (1u << 17)) != 0;
    f.avx512bw = (ebx & (1u << 30)) != 0;
    f.avx512vl = (ebx & (1u << 31)) != 0;
    f.avx512vnni = (ecx & (1u << 11)) != 0;
  }
#endif
  return f;
}

}  // namespace

std::string CpuFeatures::describe() const {
  const std::pair<bool, const char*> all[] = {
      {avx2, "avx2"},         {fma, "fma"},           {f16c, "f16c"},         {avx512f, "avx512f"},
      {avx512bw, "avx512bw"}, {avx512dq, "avx512dq"}, {avx512vl, "avx512vl"}, {avx512vnni, "avx512vnni"}};
  std::string text;
  for (const auto& [has, name] : all) {
    if (!has) continue;
    if (!text.empty()) text += ' ';
    text += name;
  }
  if ((avx2 || avx512f) && !os_avx) text += " (vector state not enabled by the OS)";
  else if (avx512f && !os_avx512) text += " (AVX-512 state not enabled by the OS)";
  return text.empty() ? "no AVX" : text;
}

namespace {

bool read_int(const std::string& path, long& value) {
  std::ifstream in(path);
  return static_cast<bool>(in >> value);
}

std::size_t count_physical_cores() noexcept {
  try {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    const bool have_mask = sched_getaffinity(0, sizeof(allowed), &allowed) == 0;
    std::set<std::pair<long, long>> cores;
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (have_mask && !CPU_ISSET(cpu, &allowed)) continue;
      const std::string topology =
          "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
      long package = 0, core = 0;
      if (!read_int(topology + "physical_package_id", package) ||
          !read_int(topology + "core_id", core)) {
        continue;
      }
      cores.emplace(package, core);
    }
    if (!cores.empty()) return cores.size();
  } catch (...) {
    // Fall through to the portable answer.
  }
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

}  // namespace

const CpuFeatures& cpu_features() noexcept {
  static const CpuFeatures features = detect();
  return features;
}

std::size_t l2_cache_bytes() noexcept {
  static const std::size_t bytes = [] {
    const long reported = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return reported > 0 ? static_cast<std::size_t>(reported) : std::size_t{1} << 20;
  }();
  return bytes;
}

std::size_t physical_core_count() noexcept {
  static const std::size_t count = count_physical_cores();
  return count;
}

bool runs_avx2_kernels() noexcept { return cpu_features().has_avx2_kernels(); }

bool runs_avx512_kernels() noexcept { return cpu_features().has_avx512_kernels(); }

}  // namespace lpx::kernels::cpu
