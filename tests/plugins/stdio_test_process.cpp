#include "plugins/stdio_test_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace lpx::test {

StdinChild::StdinChild(const std::vector<std::string>& argv,
                       const std::map<std::string, std::string>& environment) {
  signal(SIGPIPE, SIG_IGN);  // a child that exits early must not kill the test with our write
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [key, value] : environment) env[key] = value;
  std::vector<std::string> env_strings;
  for (const auto& [key, value] : env) env_strings.push_back(key + "=" + value);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  const std::string out_path = (dir_.path() / "stdout").string();
  const std::string err_path = (dir_.path() / "stderr").string();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (out < 0 || err < 0) _exit(126);
    dup2(in[0], 0);
    dup2(out, 1);
    dup2(err, 2);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  close(in[0]);
  stdin_fd_ = in[1];
}

StdinChild::~StdinChild() {
  close_stdin();
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

void StdinChild::write_stdin(std::string_view text) {
  while (!text.empty() && stdin_fd_ >= 0) {
    const ssize_t n = write(stdin_fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EPIPE: the child is gone or closed stdin
    text.remove_prefix(static_cast<size_t>(n));
  }
}

void StdinChild::close_stdin() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
  stdin_fd_ = -1;
}

bool StdinChild::wait_for_stdout(std::string_view needle, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (read_file(dir_.path() / "stdout").find(needle) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

bool StdinChild::wait_for_stdout_size(size_t size, std::chrono::milliseconds timeout) const {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ignored;
    if (std::filesystem::file_size(dir_.path() / "stdout", ignored) > size && !ignored) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

CommandResult StdinChild::wait(std::chrono::milliseconds timeout) {
  reaped_ = true;
  return wait_for_child(pid_, dir_.path(), timeout);
}

CommandResult run_lpx_with_stdin(const std::vector<std::string>& arguments, std::string_view input,
                                 std::chrono::milliseconds timeout) {
  std::vector<std::string> argv = {LPX_PIPELINE_BINARY};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  StdinChild child(argv, {{"LPX_PLUGIN_PATH", ""}});
  child.write_stdin(input);
  child.close_stdin();
  return child.wait(timeout);
}

}  // namespace lpx::test
