#include "run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <chrono>
#include <ctime>

#include <lpx/cpp/status.hpp>

namespace lpx::batch {
namespace {

namespace fs = std::filesystem;

// "20261130-142501" for directory names, or ISO 8601 for log lines.
std::string utc_now(bool iso) {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[64];
  if (iso) {
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ ", &tm);
  } else {
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &tm);
  }
  return text;
}

// Empty, or holding only what a run writes before run.json (a run killed while starting).
bool unused_directory(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return false;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name != ".lock" && name != "run.log" && name != "run.json.tmp") return false;
  }
  return !ec;
}

boost::json::object record_json(const RunRecord& r) {
  return {{"input", r.input}, {"input_sha256", r.input_sha256}, {"shard", r.shard}};
}

}  // namespace

std::optional<RunRecord> read_run_record(const fs::path& dir) {
  const fs::path file = dir / "run.json";
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  boost::system::error_code ec;
  const boost::json::value stored = boost::json::parse(text, ec);
  const boost::json::object* s = !ec ? stored.if_object() : nullptr;
  const auto field = [&](const char* name) -> std::string {
    const boost::json::value* v = s ? s->if_contains(name) : nullptr;
    if (v == nullptr || !v->is_string()) throw Error(LPX_ERR_INVALID_ARGUMENT, file.string() + " is damaged");
    return std::string(v->get_string());
  };
  return RunRecord{field("input"), field("input_sha256"), field("shard")};
}

std::string output_key(const boost::json::object& line) {
  for (const char* name : {"custom_id", "id"}) {
    const boost::json::value* v = line.if_contains(name);
    if (v != nullptr && v->is_string()) return std::string(v->get_string());
  }
  const boost::json::value* number = line.if_contains("line");
  if (number != nullptr && number->is_int64()) return "line:" + std::to_string(number->get_int64());
  return {};
}

RunDirectory::RunDirectory(const BatchOptions& options, const RunRecord& record) {
  path_ = options.run_dir.empty()
              ? fs::path("outputs") / (utc_now(false) + "-" + record.input_sha256.substr(0, 8))
              : fs::path(options.run_dir);
  std::error_code ec;
  const bool existed = fs::exists(path_ / "run.json", ec);
  const bool occupied = fs::exists(path_, ec) && !unused_directory(path_);
  if (options.resume && occupied && !existed) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "cannot resume in " + path_.string() +
                    ": it is not empty and holds no batch run (no run.json); nothing was touched");
  }
  if (!options.resume && occupied) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "run directory " + path_.string() +
                    " already holds a run; nothing in it was touched. Pass --resume to finish "
                    "that run, or choose another --run-dir");
  }
  fs::create_directories(path_, ec);
  if (ec) throw Error(LPX_ERR_IO, path_.string() + ": cannot create: " + ec.message());

  const fs::path lock = path_ / ".lock";
  lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "run directory " + path_.string() + " is in use by another lpx-pipeline process");
  }

  log_.open(path_ / "run.log", std::ios::app);
  if (!log_) throw Error(LPX_ERR_IO, (path_ / "run.log").string() + ": cannot open");
  if (existed) {
    const RunRecord stored = *read_run_record(path_);
    if (stored.input_sha256 != record.input_sha256) {
      throw Error(LPX_ERR_INVALID_ARGUMENT,
                  "cannot resume " + path_.string() + ": its input was " + stored.input +
                      " (sha256 " + stored.input_sha256.substr(0, 12) + "…); " + record.input +
                      " differs (sha256 " + record.input_sha256.substr(0, 12) + "…)");
    }
    if (stored.shard != record.shard) {
      throw Error(LPX_ERR_INVALID_ARGUMENT, "cannot resume " + path_.string() + ": it is shard '" +
                                                stored.shard + "', not '" + record.shard + "'");
    }
    resumed_ = true;
  } else {
    write_file_atomically(path_ / "run.json", boost::json::serialize(record_json(record)) + "\n");
  }
  collect("results.jsonl", done_ok_);
  collect("failures.jsonl", done_failed_);
  results_ = std::make_unique<JsonlAppender>(path_ / "results.jsonl");
  failures_ = std::make_unique<JsonlAppender>(path_ / "failures.jsonl");
}

RunDirectory::~RunDirectory() {
  if (lock_fd_ >= 0) ::close(lock_fd_);  // releases the lock
}

void RunDirectory::collect(const char* file, std::size_t& count) {
  std::size_t discarded = 0;
  const fs::path path = path_ / file;
  const std::vector<std::string> lines = recover_jsonl(path, &discarded);
  if (discarded > 0) {
    log("discarded a partial last line of " + std::string(file) + " (" + std::to_string(discarded) +
        " bytes) left by an interrupted run; that input runs again");
  }
  for (std::size_t i = 0; i < lines.size(); ++i) {
    boost::system::error_code ec;
    const boost::json::value v = boost::json::parse(lines[i], ec);
    const std::string key = !ec && v.is_object() ? output_key(v.get_object()) : std::string();
    if (key.empty()) {
      throw Error(LPX_ERR_INVALID_ARGUMENT, path.string() + ":" + std::to_string(i + 1) +
                                                ": not an output line of a batch run (damaged file?)");
    }
    done_.insert(key);
    ++count;
  }
}

void RunDirectory::log(const std::string& line) {
  if (!log_.is_open()) return;
  log_ << utc_now(true) << line << '\n';
  log_.flush();
}

void RunDirectory::write_summary(const boost::json::object& summary) {
  write_file_atomically(path_ / "summary.json", boost::json::serialize(summary) + "\n");
}

}  // namespace lpx::batch
