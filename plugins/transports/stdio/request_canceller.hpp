// RequestCanceller: lets request_stop() (any thread) cancel the request that run() is waiting on.
//
// run() attaches the engine for its duration and reports each request's id as soon as it is
// submitted; stop() cancels that request and every later one. A request submitted after stop()
// is cancelled the moment its id arrives, so no stop is lost between submit and started().
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>

#include <lpx/cpp/engine.hpp>

namespace lpx::stdio {

class RequestCanceller {
 public:
  void attach(const EngineHandle& engine);
  void detach() noexcept;  // before the engine goes away (the end of run)

  void started(std::uint64_t request_id);
  void finished() noexcept;

  // Thread-safe, idempotent; holds the lock only to call the engine's (thread-safe) cancel.
  void stop() noexcept;
  // Lock-free: the engine thread asks it from the token callback.
  bool stopped() const noexcept { return stopped_.load(std::memory_order_acquire); }

 private:
  std::mutex mutex_;
  std::optional<EngineHandle> engine_;
  std::optional<std::uint64_t> active_;
  std::atomic<bool> stopped_{false};
};

}  // namespace lpx::stdio
