// Turns SIGINT/SIGTERM (stop) and SIGHUP (reload where there is one, else stop: a closed
// terminal ends the run) into callbacks on a dedicated thread (never inside a signal handler).
// A second SIGINT while stopping exits at once with status 130.
#pragma once

#include <functional>
#include <thread>

namespace lpx::cli {

class SignalWatcher {
 public:
  // Blocks SIGINT/SIGTERM/SIGHUP in the calling thread (and so in every thread it starts later).
  // Construct it before starting other threads.
  SignalWatcher();
  ~SignalWatcher();
  SignalWatcher(const SignalWatcher&) = delete;
  SignalWatcher& operator=(const SignalWatcher&) = delete;

  // Starts watching; `on_stop` runs on the watcher thread at the first SIGINT/SIGTERM (and
  // SIGHUP when there is no `on_reload`); `on_reload`, if set, at each SIGHUP before that. Both
  // must return quickly.
  void start(std::function<void()> on_stop, std::function<void()> on_reload = {});
  // Stops watching and waits for a running `on_stop` to return. Call it before destroying what
  // `on_stop` touches. Idempotent; the destructor calls it too.
  void stop();

 private:
  std::thread thread_;
};

}  // namespace lpx::cli
