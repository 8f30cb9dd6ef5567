// jsonl: batch jobs. Every line of a JSONL input file becomes an engine request (continuous
// batching), every answer a line of results.jsonl or failures.jsonl in a run directory, and a
// job killed at any moment finishes with --resume, each input answered exactly once.
// See docs/batch.md.
#include <memory>
#include <mutex>

#include <lpx/cpp/plugin.hpp>

#include "batch_merge.hpp"
#include "batch_options.hpp"
#include "batch_runner.hpp"

namespace lpx::batch {
namespace {

class JsonlTransport final : public Transport {
 public:
  explicit JsonlTransport(const Options& options) : options_(BatchOptions::read(options)) {}

  void run(const lpx_run_context& context) override {
    if (!options_.merge.empty()) {
      merge_run_directories(options_.merge, options_.run_dir);
      return;
    }
    auto runner = std::make_shared<BatchRunner>(context, options_);
    {
      std::lock_guard lock(mutex_);
      if (stop_requested_) throw Error(LPX_ERR_INCOMPLETE, "stopped before the job started");
      runner_ = runner;
    }
    struct Clear {
      JsonlTransport& t;
      ~Clear() {
        std::lock_guard lock(t.mutex_);
        t.runner_.reset();
      }
    } clear{*this};
    runner->run();
  }

  void request_stop() noexcept override {
    std::lock_guard lock(mutex_);
    stop_requested_ = true;
    if (runner_) runner_->stop();
  }

 private:
  BatchOptions options_;
  std::mutex mutex_;
  bool stop_requested_ = false;
  std::shared_ptr<BatchRunner> runner_;
};

// transport:run-record: summary.json carries lpx_run_context.run_record_json as "run".
constexpr const char* kCapabilities[] = {"transport:batch", "transport:openai-batch", "transport:run-record"};

}  // namespace
}  // namespace lpx::batch

LPX_PLUGIN_ENTRY() {
  return lpx::describe<lpx::batch::JsonlTransport>(
      {.name = "jsonl",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "Batch jobs over a JSONL file: resumable, exactly once, shardable",
       .options = lpx::batch::batch_option_schema(),
       .capabilities = lpx::batch::kCapabilities});
}
