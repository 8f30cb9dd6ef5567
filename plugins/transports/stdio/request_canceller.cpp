#include "request_canceller.hpp"

namespace lpx::stdio {

void RequestCanceller::attach(const EngineHandle& engine) {
  std::lock_guard lock(mutex_);
  engine_ = engine;
  active_.reset();
}

void RequestCanceller::detach() noexcept {
  std::lock_guard lock(mutex_);
  engine_.reset();
  active_.reset();
}

void RequestCanceller::started(std::uint64_t request_id) {
  std::lock_guard lock(mutex_);
  active_ = request_id;
  if (stopped() && engine_) engine_->cancel(request_id);
}

void RequestCanceller::finished() noexcept {
  std::lock_guard lock(mutex_);
  active_.reset();
}

void RequestCanceller::stop() noexcept {
  stopped_.store(true, std::memory_order_release);
  std::lock_guard lock(mutex_);
  if (engine_ && active_) engine_->cancel(*active_);
}

}  // namespace lpx::stdio
