// Brings a validated pipeline to life: creates its plugin instances in slot order, runs the
// transport, and destroys everything in reverse order.
//
// Threading: construct, run and destroy on one thread; request_stop from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_library.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class PipelineRunner {
 public:
  // `registry` loads plugins the engine adds (default backend, per-request samplers); it must
  // outlive the runner.
  PipelineRunner(const Pipeline& pipeline, PluginRegistry& registry)
      : pipeline_(pipeline), registry_(registry) {}
  ~PipelineRunner();
  PipelineRunner(const PipelineRunner&) = delete;
  PipelineRunner& operator=(const PipelineRunner&) = delete;

  // Creates every instance, then the decode engine when the pipeline has a [model]; on the first
  // failure destroys what was made and says why.
  Expected<bool> create_instances();
  // Runs the transport until it finishes; its error message on failure.
  Expected<bool> run();
  // Asks the transport to stop. Safe before, during and after run().
  void request_stop() noexcept;

  // Shows statistics after each answer (`run --stats`), for transports that print answers.
  void set_show_stats(bool show) noexcept { show_stats_ = show; }
  // What the run context tells transports about this host (lpx_run_context.host_*).
  void set_host_info(std::string version, std::string commit) {
    host_version_ = std::move(version);
    host_commit_ = std::move(commit);
  }

 private:
  const Pipeline& pipeline_;
  PluginRegistry& registry_;
  bool show_stats_ = false;
  std::string host_version_ = "unknown", host_commit_ = "unknown";
  std::vector<std::shared_ptr<PluginInstance>> instances_;  // pipeline_.sections order
  std::unique_ptr<Engine> engine_;
  std::shared_ptr<PluginInstance> transport_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace lpx::core
