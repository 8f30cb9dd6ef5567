// What a benchmark or a version line says about the CPU it ran on: the model name, the vector
// features the kernels care about, which kernel set the `cpu` backend runs with a given
// `kernels` option (the backend's own choice, kernels/cpu/kernel_set.hpp), and a backend's
// options with that set resolved.
#pragma once

#include <string>
#include <variant>

#include "pipeline/option_schema.hpp"

namespace lpx::host {

// "Intel(R) Xeon(R) Processor" from /proc/cpuinfo; "unknown CPU" when it does not say.
std::string cpu_model_name();

// "avx2 fma f16c avx512f avx512bw avx512dq avx512vl avx512vnni"
std::string cpu_isa();

// The set `requested` selects here ("auto" -> "avx512 (auto)"), or "REQUESTED (not runnable
// here)".
std::string cpu_kernels(const std::string& requested);

// "activations=i16, kernels=avx512 (auto), threads=2": a backend's options (a map of name to
// OptionValue) as it runs with them, the `cpu` plugin's kernel set resolved as it resolves it.
template <class Values>
std::string describe_backend_options(const std::string& plugin, const Values& values) {
  std::string text;
  for (const auto& [key, value] : values) {
    const auto* string = std::get_if<std::string>(&value);
    std::string shown = string != nullptr ? *string : core::to_toml_text(value);
    if (plugin == "cpu" && key == "kernels" && string != nullptr) shown = cpu_kernels(*string);
    text += (text.empty() ? "" : ", ") + key + "=" + shown;
  }
  return text;
}

}  // namespace lpx::host
