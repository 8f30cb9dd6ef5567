// The exit codes of lpx-pipeline, part of its command-line contract.
#pragma once

namespace lpx::cli {

constexpr int kExitOk = 0;
constexpr int kExitRuntimeError = 1;  // bad model file, failed request, plugin failure...
constexpr int kExitUsageError = 2;    // bad command line or pipeline configuration
constexpr int kExitInterrupted = 130;  // stopped by Ctrl-C/SIGTERM before the work was done (quantize)

}  // namespace lpx::cli
