// A batch job's run directory: results.jsonl, failures.jsonl, run.log, summary.json and run.json
// (what the job is: input, its sha256, shard). A new run refuses a non-empty directory; a resumed
// one checks run.json still describes the same input and shard, repairs a torn last line, and
// reports which inputs are already done. An exclusive lock keeps a second process out.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>

#include <boost/json.hpp>

#include "batch_options.hpp"
#include "output_files.hpp"

namespace lpx::batch {

struct RunRecord {
  std::string input;         // as given
  std::string input_sha256;
  std::string shard;         // "I/N" or ""
};

class RunDirectory {
 public:
  // Throws lpx::Error with the reason it cannot be used (exists and not resuming, another
  // process holds it, different input or shard, a damaged output line).
  RunDirectory(const BatchOptions& options, const RunRecord& record);
  ~RunDirectory();

  const std::filesystem::path& path() const noexcept { return path_; }
  // Keys (ids, or "line:N") already in results.jsonl or failures.jsonl.
  const std::unordered_set<std::string>& done() const noexcept { return done_; }
  std::size_t done_ok() const noexcept { return done_ok_; }
  std::size_t done_failed() const noexcept { return done_failed_; }
  bool resumed() const noexcept { return resumed_; }

  JsonlAppender& results() { return *results_; }
  JsonlAppender& failures() { return *failures_; }
  void log(const std::string& line);  // run.log, timestamped
  void write_summary(const boost::json::object& summary);

 private:
  void collect(const char* file, std::size_t& count);

  std::filesystem::path path_;
  int lock_fd_ = -1;
  bool resumed_ = false;
  std::unordered_set<std::string> done_;
  std::size_t done_ok_ = 0, done_failed_ = 0;
  std::unique_ptr<JsonlAppender> results_, failures_;
  std::ofstream log_;
};

// The run.json of `dir`, or nullopt when it has none. Throws lpx::Error when it is damaged.
std::optional<RunRecord> read_run_record(const std::filesystem::path& dir);

// The key an output line (of results.jsonl or failures.jsonl) answers for; empty if none.
std::string output_key(const boost::json::object& line);

}  // namespace lpx::batch
