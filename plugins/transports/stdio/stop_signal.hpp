// StopSignal: a one-way "stop now" flag that a poll() loop can wait on (the self-pipe trick).
//
// raise() may be called from any thread, any number of times, and never blocks: it sets the flag
// and writes one byte into a non-blocking pipe. The byte is never read back, so once raised the
// pipe's read end stays readable and every later poll() on wait_fd() returns at once.
#pragma once

#include <atomic>

namespace lpx::stdio {

class StopSignal {
 public:
  StopSignal();  // throws lpx::Error when the pipe cannot be created
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  void raise() noexcept;
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }
  // Becomes readable (POLLIN) once raise() has been called.
  int wait_fd() const noexcept { return read_fd_; }

 private:
  std::atomic<bool> raised_{false};
  int read_fd_ = -1;
  int write_fd_ = -1;
};

}  // namespace lpx::stdio
