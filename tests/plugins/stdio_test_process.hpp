// A child process for the stdio transport's tests: like lpx::test::ChildProcess, but its stdin
// is a pipe the test writes to (and may keep open), and stdout can be watched while it runs.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "support/test_support.hpp"

namespace lpx::test {

class StdinChild {
 public:
  StdinChild(const std::vector<std::string>& argv,
             const std::map<std::string, std::string>& environment = {});
  ~StdinChild();
  StdinChild(const StdinChild&) = delete;
  StdinChild& operator=(const StdinChild&) = delete;

  pid_t pid() const noexcept { return pid_; }
  void write_stdin(std::string_view text);  // ignores a child that stopped reading
  void close_stdin();
  // True once the child's stdout contains `needle`; false after `timeout`.
  bool wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout) const;
  // True once the child has written more than `size` bytes to stdout; false after `timeout`.
  bool wait_for_stdout_size(size_t size, std::chrono::milliseconds timeout) const;
  // Waits like ChildProcess::wait (killing the child and failing on timeout). Stdin stays as
  // it is: close it first for the child to see the end of input.
  CommandResult wait(std::chrono::milliseconds timeout);

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  bool reaped_ = false;
};

// Runs `lpx-pipeline arguments...` with `input` as its whole stdin.
CommandResult run_lpx_with_stdin(const std::vector<std::string>& arguments, std::string_view input,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(20));

}  // namespace lpx::test
