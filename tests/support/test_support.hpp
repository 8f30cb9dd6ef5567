// Helpers shared by the test suites: temporary folders, files, and child processes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace lpx::test {

// A fresh folder under the system temp dir, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& text);
std::string read_file(const std::filesystem::path& path);

struct CommandResult {
  int exit_code = -1;  // 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// A child process with its stdout/stderr captured to files.
class ChildProcess {
 public:
  // Starts `argv` with `environment` added to (or replacing entries of) this process's.
  ChildProcess(const std::vector<std::string>& argv,
               const std::map<std::string, std::string>& environment = {});
  ~ChildProcess();
  pid_t pid() const noexcept { return pid_; }
  // Waits at most `timeout`; on timeout kills the child and fails the current test.
  CommandResult wait(std::chrono::milliseconds timeout = std::chrono::seconds(120));

 private:
  TempDir dir_;
  pid_t pid_ = -1;
  bool reaped_ = false;
};

// Waits at most `timeout` for child `pid` (killing it and failing the test on timeout); its
// stdout and stderr are the files "stdout" and "stderr" in `output_dir`.
CommandResult wait_for_child(pid_t pid, const std::filesystem::path& output_dir,
                             std::chrono::milliseconds timeout);

// Runs a command to completion.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::map<std::string, std::string>& environment = {},
                          std::chrono::milliseconds timeout = std::chrono::seconds(120));

// Runs lpx-pipeline with `arguments`; LPX_PLUGIN_PATH is `plugin_path` (may be empty).
CommandResult run_lpx(const std::vector<std::string>& arguments, const std::string& plugin_path = "");

}  // namespace lpx::test
