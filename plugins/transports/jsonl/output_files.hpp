// Durable output files of a run directory. Lines are appended whole, each with one write(2) on an
// O_APPEND descriptor, so a process killed at any moment leaves at most one partial last line;
// recover_jsonl finds and removes it before a resumed run appends. Whole files (summary, run
// record) are replaced atomically: written to a temporary, synced, renamed over the old one.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::batch {

class JsonlAppender {
 public:
  // Opens `path` for appending, creating it. Throws lpx::Error (LPX_ERR_IO) naming it.
  explicit JsonlAppender(std::filesystem::path path);
  ~JsonlAppender();
  JsonlAppender(const JsonlAppender&) = delete;
  JsonlAppender& operator=(const JsonlAppender&) = delete;

  // Appends `line` plus '\n'. Data reaches the disk within about a second (fdatasync).
  void append(std::string_view line);
  void sync();

 private:
  std::filesystem::path path_;
  int fd_ = -1;
  std::string buffer_;
  std::chrono::steady_clock::time_point last_sync_;
};

// The complete lines of a JSONL file (none if it does not exist). A partial last line (no
// final newline: a write cut short by a crash) is cut off the file; *discarded says its bytes.
std::vector<std::string> recover_jsonl(const std::filesystem::path& path, std::size_t* discarded);

// The complete lines of a JSONL file, read only (a partial last line is ignored, not cut).
std::vector<std::string> read_complete_lines(const std::filesystem::path& path);

// Replaces `path` with `content` atomically. Throws lpx::Error naming the file.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

}  // namespace lpx::batch
