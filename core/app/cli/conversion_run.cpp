#include "cli/conversion_run.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli/exit_codes.hpp"
#include "cli/progress_bar.hpp"
#include "cli/signal_watcher.hpp"

namespace lpx::cli {

int run_conversion(const std::string& output, const std::string& what, const ConversionWork& work) {
  SignalWatcher signals;
  std::atomic<bool> stop{false};
  signals.start([&stop] { stop = true; });
  ProgressBar bar;
  const auto started = std::chrono::steady_clock::now();
  auto summary = work(&stop, [&bar](const core::QuantizeProgress& p) { bar.show(p); });
  signals.stop();
  bar.done();
  if (!summary) {
    std::cerr << "error: " << summary.error() << "\n";
    return summary.error().code == LPX_ERR_CANCELLED ? kExitInterrupted : kExitRuntimeError;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::fprintf(stderr, "%s: %s, %zu tensors (%zu converted), %.1f MiB -> %.1f MiB in %.1f s\n", output.c_str(),
               what.c_str(), summary->tensors, summary->converted,
               static_cast<double>(summary->input_bytes) / (1 << 20),
               static_cast<double>(summary->output_bytes) / (1 << 20), seconds);
  return kExitOk;
}

}  // namespace lpx::cli
