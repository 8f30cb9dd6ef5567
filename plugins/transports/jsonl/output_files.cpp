#include "output_files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <lpx/cpp/status.hpp>

namespace lpx::batch {
namespace {

[[noreturn]] void io_error(const std::filesystem::path& path, const char* what) {
  throw Error(LPX_ERR_IO, path.string() + ": " + what + ": " + std::strerror(errno));
}

void write_all(int fd, std::string_view data, const std::filesystem::path& path) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      io_error(path, "write failed");
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

void sync_directory(const std::filesystem::path& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself is atomic
  ::fsync(fd);
  ::close(fd);
}

}  // namespace

JsonlAppender::JsonlAppender(std::filesystem::path path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) io_error(path_, "cannot open for appending");
  last_sync_ = std::chrono::steady_clock::now();
}

JsonlAppender::~JsonlAppender() {
  if (fd_ >= 0) {
    ::fdatasync(fd_);
    ::close(fd_);
  }
}

void JsonlAppender::append(std::string_view line) {
  buffer_.assign(line);
  buffer_ += '\n';
  write_all(fd_, buffer_, path_);  // one write for the whole line (loops only if cut short)
  const auto now = std::chrono::steady_clock::now();
  if (now - last_sync_ >= std::chrono::seconds(1)) {
    sync();
    last_sync_ = now;
  }
}

void JsonlAppender::sync() {
  if (::fdatasync(fd_) != 0) io_error(path_, "fdatasync failed");
}

namespace {

// The file's bytes and where its complete lines end.
std::size_t read_text(const std::filesystem::path& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return 0;
  std::ostringstream content;
  content << in.rdbuf();
  text = content.str();
  return text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
}

std::vector<std::string> split_lines(const std::string& text, std::size_t complete) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < complete) {
    const std::size_t end = text.find('\n', start);
    if (end > start) lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

}  // namespace

std::vector<std::string> read_complete_lines(const std::filesystem::path& path) {
  std::string text;
  const std::size_t complete = read_text(path, text);
  return split_lines(text, complete);
}

std::vector<std::string> recover_jsonl(const std::filesystem::path& path, std::size_t* discarded) {
  *discarded = 0;
  std::string text;
  const std::size_t complete = read_text(path, text);
  if (complete < text.size()) {
    *discarded = text.size() - complete;
    std::error_code ec;
    std::filesystem::resize_file(path, complete, ec);
    if (ec) throw Error(LPX_ERR_IO, path.string() + ": cannot cut a partial last line: " + ec.message());
  }
  return split_lines(text, complete);
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) io_error(temporary, "cannot create");
  try {
    write_all(fd, content, temporary);
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    io_error(temporary, "fsync failed");
  }
  ::close(fd);
  if (::rename(temporary.c_str(), path.c_str()) != 0) io_error(path, "rename failed");
  sync_directory(path.parent_path().empty() ? "." : path.parent_path());
}

}  // namespace lpx::batch
