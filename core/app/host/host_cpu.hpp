// What a benchmark or a version line says about the CPU it ran on: the model name, the vector
// features the kernels care about, and which kernel set the `cpu` backend runs with a given
// `kernels` option (the backend's own choice, kernels/cpu/kernel_set.hpp).
#pragma once

#include <string>

namespace lpx::host {

// "Intel(R) Xeon(R) Processor" from /proc/cpuinfo; "unknown CPU" when it does not say.
std::string cpu_model_name();

// "avx2 fma f16c avx512f avx512bw avx512dq avx512vl avx512vnni"
std::string cpu_isa();

// The set `requested` selects here ("auto" -> "avx512 (auto)"), or "REQUESTED (not runnable
// here)".
std::string cpu_kernels(const std::string& requested);

}  // namespace lpx::host
