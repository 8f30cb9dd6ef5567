// Runs a batch job: every input of the shard not yet done flows through the engine's continuous
// batching (up to max_in_flight submitted at once); each finished input is appended whole to
// results.jsonl or failures.jsonl, which are also the job's state, so a job killed at any moment
// resumes with every input answered exactly once.
//
// Threading: run() on the transport's thread; engine callbacks hand finished inputs over through
// a mutex-protected queue; stop() from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <lpx/cpp/engine.hpp>
#include <lpx/kinds/transport.h>

#include "batch_options.hpp"

namespace lpx::batch {

class BatchRunner {
 public:
  BatchRunner(const lpx_run_context& context, BatchOptions options);
  ~BatchRunner();

  // Throws lpx::Error: bad input (duplicate ids), unusable run directory, I/O failures, or
  // LPX_ERR_INCOMPLETE when stopped before the end.
  void run();
  void stop() noexcept;

 private:
  struct Job;
  void submit(Job& job);
  void finish(std::unique_ptr<Job> job);
  bool is_transient(const Job& job) const;

  const lpx_run_context& context_;
  EngineHandle engine_;
  // A line whose model is "MODEL:ADAPTER" (MODEL the model's name) runs with that adapter
  // (lpx_request.adapter; the engine refuses one it does not have); any other model field runs
  // the model alone, as batch files name models they were written for.
  std::string adapter_prefix_;  // "MODEL:"
  BatchOptions options_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job*> completed_;  // finished by the engine, not yet written
  std::atomic<bool> stopping_{false};

  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lpx::batch
