#include "cli/build_info.hpp"
#include "cli/commands.hpp"
#include "host/host_cpu.hpp"
#include "lpx/version.h"

namespace lpx::cli {

std::string version_text() {
  const BuildInfo& b = build_info();
  return std::string("lpx-pipeline ") + b.version + "\n" +
         "commit:      " + b.git_commit + "\n" +
         "compiler:    " + b.compiler + "\n" +
         "build:       " + b.build_type + " (sanitizers: " + b.sanitizers + ")\n" +
         "plugin ABI:  " + std::to_string(LPX_ABI_MAJOR) + "." + std::to_string(LPX_ABI_MINOR) +
         "\n" + "backends:    " + b.backends + "\n" + "cuda:        " + b.cuda + "\n" +
         "cpu:         " + host::cpu_model_name() + " (" + host::cpu_isa() + ")\n" +
         "cpu kernels: " + host::cpu_kernels("auto");
}

}  // namespace lpx::cli
