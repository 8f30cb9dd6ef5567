#include "cli/pipeline_reloader.hpp"

namespace lpx::cli {

PipelineReloader::PipelineReloader(std::function<void()> reload)
    : reload_(std::move(reload)), thread_([this] {
        std::unique_lock lock(mutex_);
        for (;;) {
          wake_.wait(lock, [&] { return pending_ || quitting_; });
          if (quitting_) return;
          pending_ = false;
          lock.unlock();
          reload_();
          lock.lock();
        }
      }) {}

PipelineReloader::~PipelineReloader() {
  {
    std::lock_guard lock(mutex_);
    quitting_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void PipelineReloader::request() {
  {
    std::lock_guard lock(mutex_);
    pending_ = true;
  }
  wake_.notify_all();
}

}  // namespace lpx::cli
