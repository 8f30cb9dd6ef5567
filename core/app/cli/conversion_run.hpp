// What `quantize` and `convert` share around their work: Ctrl-C (or SIGTERM) asks it to stop
// after the current slab (it then removes its partial output), a progress bar on stderr, the
// exit code of a failure (kExitInterrupted when stopped), and the closing line
// "OUT: WHAT, N tensors (M converted), A MiB -> B MiB in S s".
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "quantize/quantize_model.hpp"

namespace lpx::cli {

using ConversionWork = std::function<core::Expected<core::QuantizeSummary>(
    const std::atomic<bool>* stop, std::function<void(const core::QuantizeProgress&)> on_progress)>;

// Runs `work`; `what` describes the result in the closing line ("Q4_K_M", "from safetensors
// (types kept)"). Returns the command's exit code.
int run_conversion(const std::string& output, const std::string& what, const ConversionWork& work);

}  // namespace lpx::cli
