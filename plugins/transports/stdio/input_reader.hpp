// InputReader: reads lines (or everything) from a file descriptor without ever blocking past a
// stop: each read waits in poll() on both the input and a StopSignal, so request_stop() on another
// thread ends a read that is waiting for the user to type.
//
// The descriptor is left in blocking mode (stdin is usually shared with the shell); poll() says
// when read() will not block. One thread reads; only the StopSignal is shared.
#pragma once

#include <string>

#include "stop_signal.hpp"

namespace lpx::stdio {

enum class ReadResult {
  kLine,     // `out` holds one line, its '\n' (and a '\r' before it) removed
  kEnd,      // end of input; for read_all, `out` holds everything that was read
  kStopped,  // the StopSignal was raised
};

class InputReader {
 public:
  InputReader(int fd, const StopSignal& stop) noexcept : fd_(fd), stop_(stop) {}

  // The next line. A last line without '\n' is returned as a line; kEnd comes after it.
  // Throws lpx::Error on a read error.
  ReadResult read_line(std::string& out);
  // Everything up to the end of input, byte for byte.
  ReadResult read_all(std::string& out);

 private:
  // Appends the next chunk of input to buffer_: kLine when some bytes came, kEnd at end of input.
  ReadResult fill();

  int fd_;
  const StopSignal& stop_;
  std::string buffer_;
  bool at_end_ = false;
};

}  // namespace lpx::stdio
