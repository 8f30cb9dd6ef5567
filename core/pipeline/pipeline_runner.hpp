// Brings a validated pipeline to life: creates its plugin instances in slot order, runs the
// transport, and destroys everything in reverse order.
//
// Threading: construct, run and destroy on one thread; request_stop from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_library.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class PipelineRunner {
 public:
  explicit PipelineRunner(const Pipeline& pipeline) : pipeline_(pipeline) {}
  ~PipelineRunner();
  PipelineRunner(const PipelineRunner&) = delete;
  PipelineRunner& operator=(const PipelineRunner&) = delete;

  // Creates every instance; on the first failure destroys what was made and says why.
  Expected<bool> create_instances();
  // Runs the transport until it finishes; its error message on failure.
  Expected<bool> run();
  // Asks the transport to stop. Safe before, during and after run().
  void request_stop() noexcept;

 private:
  const Pipeline& pipeline_;
  std::vector<std::shared_ptr<PluginInstance>> instances_;  // creation order
  std::shared_ptr<PluginInstance> transport_;
  std::atomic<bool> stop_requested_{false};
};

}  // namespace lpx::core
