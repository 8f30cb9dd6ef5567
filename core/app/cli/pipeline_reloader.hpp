// Runs pipeline reloads (SIGHUP) on a thread of their own, so that loading a model never delays
// the signal watcher's answer to SIGTERM. Requests that arrive while a reload runs coalesce into
// one more reload after it.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace lpx::cli {

class PipelineReloader {
 public:
  explicit PipelineReloader(std::function<void()> reload);
  ~PipelineReloader();  // waits for a reload in progress
  PipelineReloader(const PipelineReloader&) = delete;
  PipelineReloader& operator=(const PipelineReloader&) = delete;

  // Any thread; returns at once.
  void request();

 private:
  std::function<void()> reload_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool pending_ = false;
  bool quitting_ = false;
  std::thread thread_;
};

}  // namespace lpx::cli
