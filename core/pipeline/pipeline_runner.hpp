// Brings a validated pipeline to life: creates its transport, loads its models into a ModelPool
// (the default one now, the others when requests need them), runs the transport, and takes
// everything down in reverse order. reload() serves another version of the pipeline's models
// while the transport runs (SIGHUP).
//
// Transports that declare the capability "transport:models" reach every model through
// lpx_run_context.models; the others get the default model's engine (lpx_run_context.engine),
// held for the whole run, and serve one model only.
//
// Threading: construct, create_instances, run and destroy on one thread; request_stop and
// reload from any thread.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_library.hpp"
#include "serving/model_pool.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class PipelineRunner {
 public:
  // `registry` loads the plugins of every model's engine; it must outlive the runner.
  PipelineRunner(const Pipeline& pipeline, PluginRegistry& registry)
      : pipeline_(pipeline), registry_(registry) {}
  ~PipelineRunner();
  PipelineRunner(const PipelineRunner&) = delete;
  PipelineRunner& operator=(const PipelineRunner&) = delete;

  // Creates the transport, then serves the pipeline's models, loading the default one; on the
  // first failure destroys what was made and says why.
  Expected<bool> create_instances();
  // Runs the transport until it finishes; its error message on failure.
  Expected<bool> run();
  // Asks the transport to stop. Safe before, during and after run().
  void request_stop() noexcept;
  // Serves the models of `pipeline` (the same file, read again) from now on: unchanged models
  // keep their engines, requests in flight finish on the engines they hold. The transport keeps
  // its options (a change there is reported, to apply at the next start). Fails, changing
  // nothing, when the new models cannot be served; `true` when they are.
  Expected<bool> reload(const Pipeline& pipeline);

  // Shows statistics after each answer (`run --stats`), for transports that print answers.
  void set_show_stats(bool show) noexcept { show_stats_ = show; }
  // What the run context tells transports about this host (lpx_run_context.host_*).
  void set_host_info(std::string version, std::string commit) {
    host_version_ = std::move(version);
    host_commit_ = std::move(commit);
  }
  // The JSON record of this run (lpx_run_context.run_record_json), for transports that declare
  // the capability "transport:run-record"; the others get NULL.
  void set_run_record(std::string json) { run_record_ = std::move(json); }
  // Whether the transport (once created) declares `capability`.
  bool transport_supports(const std::string& capability) const {
    return transport_ && transport_->library().supports(capability);
  }

 private:
  Expected<bool> serve_models(const Pipeline& pipeline);

  const Pipeline& pipeline_;
  PluginRegistry& registry_;
  bool show_stats_ = false;
  std::string host_version_ = "unknown", host_commit_ = "unknown";
  std::optional<std::string> run_record_;
  std::unique_ptr<ModelPool> pool_;               // null: the pipeline has no model
  std::optional<std::uint64_t> budget_at_start_;  // an automatic budget stays as first measured
  std::optional<Lease> default_lease_;            // for transports that serve one model
  std::shared_ptr<PluginInstance> transport_;
  std::string transport_text_;                    // its resolved section, to notice changes
  std::mutex reload_mutex_;                       // one reload at a time
  std::atomic<bool> stop_requested_{false};
};

}  // namespace lpx::core
