// What the CPU we run on can do, for choosing kernels at run time, and how many cores it has.
//
// Thread-safety: every function may be called from any thread; results are computed once.
#pragma once

#include <cstddef>

namespace lpx::kernels::cpu {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  // The operating system saves the 256-bit registers (XCR0), without which AVX is unusable.
  bool os_avx = false;

  // Everything kernels/cpu/avx2 is compiled for.
  bool has_avx2_kernels() const noexcept { return avx2 && fma && f16c && os_avx; }
};

// The features of this CPU (cpuid and xgetbv; all false on non-x86 builds).
const CpuFeatures& cpu_features() noexcept;

// Physical cores this process may run on: distinct (physical_package_id, core_id) pairs in
// /sys/devices/system/cpu/cpu*/topology over the CPUs of its affinity mask, so SMT siblings
// count once. Falls back to std::thread::hardware_concurrency() (at least 1).
std::size_t physical_core_count() noexcept;

}  // namespace lpx::kernels::cpu
