#include "cli/signal_watcher.hpp"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

namespace lpx::cli {
namespace {

// SIGUSR2 is only used to wake the watcher for shutdown.
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  sigaddset(&set, SIGUSR2);
  return set;
}

}  // namespace

SignalWatcher::SignalWatcher() {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void SignalWatcher::start(std::function<void()> on_stop, std::function<void()> on_reload) {
  thread_ = std::thread([on_stop = std::move(on_stop), on_reload = std::move(on_reload)] {
    sigset_t set = watched_signals();
    bool stopping = false;
    for (;;) {
      int signal = 0;
      if (sigwait(&set, &signal) != 0 || signal == SIGUSR2) return;
      if (signal == SIGHUP && on_reload) {
        if (stopping) continue;
        spdlog::info("SIGHUP received: reloading the pipeline");
        on_reload();
        continue;
      }
      // Without a reload, a hangup (the terminal closed) stops the run as SIGTERM does.
      if (stopping && signal == SIGINT) _exit(130);
      if (!stopping) {
        stopping = true;
        spdlog::info("{} received: stopping (press Ctrl-C again to quit at once)",
                     signal == SIGINT ? "SIGINT" : signal == SIGHUP ? "SIGHUP" : "SIGTERM");
        on_stop();
      }
    }
  });
}

void SignalWatcher::stop() {
  if (thread_.joinable()) {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }
}

SignalWatcher::~SignalWatcher() {
  stop();
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

}  // namespace lpx::cli
