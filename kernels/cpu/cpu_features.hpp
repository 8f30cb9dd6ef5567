// What the CPU we run on can do, for choosing kernels at run time, and how many cores it has.
//
// Thread-safety: every function may be called from any thread; results are computed once.
#pragma once

#include <cstddef>
#include <string>

namespace lpx::kernels::cpu {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false, avx512vnni = false;
  // The operating system saves the 256-bit registers (XCR0), without which AVX is unusable.
  bool os_avx = false;
  // ... and the opmask and 512-bit state, without which AVX-512 is unusable.
  bool os_avx512 = false;

  // Everything the avx2 compilation of kernels/cpu/x86 uses.
  bool has_avx2_kernels() const noexcept { return avx2 && fma && f16c && os_avx; }
  // Everything the avx512 compilation uses.
  bool has_avx512_kernels() const noexcept {
    return has_avx2_kernels() && avx512f && avx512bw && avx512dq && avx512vl && avx512vnni && os_avx512;
  }
  // "avx2 fma f16c avx512f ..." : the features above this CPU has, for messages and reports.
  std::string describe() const;
};

// The features of this CPU (cpuid and xgetbv; all false on non-x86 builds).
const CpuFeatures& cpu_features() noexcept;

// cpu_features().has_avx2_kernels() / has_avx512_kernels(), as functions the kernel-set table
// points to: compiled here, without the ISA flags of the sets they guard.
bool runs_avx2_kernels() noexcept;
bool runs_avx512_kernels() noexcept;

// Physical cores this process may run on: distinct (physical_package_id, core_id) pairs in
// /sys/devices/system/cpu/cpu*/topology over the CPUs of its affinity mask, so SMT siblings
// count once. Falls back to std::thread::hardware_concurrency() (at least 1).
std::size_t physical_core_count() noexcept;

// Bytes of one core's level-2 cache (sysconf), or 1 MiB where the system does not say: how much
// of a prompt's activations a kernel keeps hot while it streams weights past them.
std::size_t l2_cache_bytes() noexcept;

}  // namespace lpx::kernels::cpu
