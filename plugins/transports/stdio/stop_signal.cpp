#include "stop_signal.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <lpx/cpp/status.hpp>

namespace lpx::stdio {

StopSignal::StopSignal() {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    throw Error(LPX_ERR_INTERNAL,
                std::string("cannot create the stop pipe: ") + std::strerror(errno));
  }
  read_fd_ = fds[0];
  write_fd_ = fds[1];
}

StopSignal::~StopSignal() {
  close(read_fd_);
  close(write_fd_);
}

void StopSignal::raise() noexcept {
  if (raised_.exchange(true, std::memory_order_acq_rel)) return;  // one byte is enough
  const char byte = 1;
  ssize_t written;
  do {
    written = write(write_fd_, &byte, 1);
  } while (written < 0 && errno == EINTR);
}

}  // namespace lpx::stdio
