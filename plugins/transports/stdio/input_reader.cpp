#include "input_reader.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <lpx/cpp/status.hpp>

namespace lpx::stdio {
namespace {

[[noreturn]] void fail(const char* what) {
  throw Error(LPX_ERR_IO, std::string(what) + " failed on stdin: " + std::strerror(errno));
}

}  // namespace

ReadResult InputReader::fill() {
  for (;;) {
    if (stop_.raised()) return ReadResult::kStopped;
    pollfd fds[2] = {{fd_, POLLIN, 0}, {stop_.wait_fd(), POLLIN, 0}};
    const int ready = poll(fds, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      fail("poll");
    }
    if (fds[1].revents != 0 || stop_.raised()) return ReadResult::kStopped;
    if (fds[0].revents == 0) continue;
    // POLLIN, POLLHUP (writer gone: read() returns what is left, then 0) or POLLERR (read reports).
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      fail("read");
    }
    if (n == 0) return ReadResult::kEnd;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return ReadResult::kLine;
  }
}

ReadResult InputReader::read_line(std::string& out) {
  std::size_t scanned = 0;
  for (;;) {
    const std::size_t newline = buffer_.find('\n', scanned);
    if (newline != std::string::npos) {
      std::size_t end = newline;
      if (end > 0 && buffer_[end - 1] == '\r') --end;
      out.assign(buffer_, 0, end);
      buffer_.erase(0, newline + 1);
      return ReadResult::kLine;
    }
    scanned = buffer_.size();
    if (at_end_) {
      if (buffer_.empty()) return ReadResult::kEnd;
      out = std::move(buffer_);
      buffer_.clear();
      return ReadResult::kLine;
    }
    const ReadResult got = fill();
    if (got == ReadResult::kStopped) return got;
    if (got == ReadResult::kEnd) at_end_ = true;
  }
}

ReadResult InputReader::read_all(std::string& out) {
  while (!at_end_) {
    const ReadResult got = fill();
    if (got == ReadResult::kStopped) return got;
    if (got == ReadResult::kEnd) at_end_ = true;
  }
  out = std::move(buffer_);
  buffer_.clear();
  return ReadResult::kEnd;
}

}  // namespace lpx::stdio
