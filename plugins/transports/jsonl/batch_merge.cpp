#include "batch_merge.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <unordered_set>

#include <lpx/cpp/host.hpp>
#include <lpx/cpp/status.hpp>

#include "batch_item.hpp"
#include "batch_options.hpp"
#include "output_files.hpp"
#include "run_directory.hpp"
#include "sha256_file.hpp"

namespace lpx::batch {
namespace {

namespace fs = std::filesystem;

struct Source {
  fs::path dir;
  RunRecord record;
};

std::vector<Source> read_sources(const std::vector<std::string>& dirs) {
  std::vector<Source> sources;
  for (const std::string& d : dirs) {
    auto record = read_run_record(d);
    if (!record) throw Error(LPX_ERR_INVALID_ARGUMENT, d + ": not a batch run directory (no run.json)");
    if (!sources.empty() && record->input_sha256 != sources.front().record.input_sha256) {
      throw Error(LPX_ERR_INVALID_ARGUMENT, d + ": its input (" + record->input +
                                                ") is not the input of " + sources.front().dir.string());
    }
    sources.push_back({d, *record});
  }
  return sources;
}

// Shards that none of the directories is, e.g. "1/4, 3/4".
std::string missing_shards(const std::vector<Source>& sources) {
  std::set<std::uint32_t> have;
  std::uint32_t count = 0;
  for (const Source& s : sources) {
    if (s.record.shard.empty()) return {};  // a whole run covers every shard
    const auto shard = parse_shard(s.record.shard);
    if (!shard) continue;
    count = shard->count;
    have.insert(shard->index);
  }
  std::string out;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (!have.count(i)) out += (out.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count);
  }
  return out;
}

}  // namespace

void merge_run_directories(const std::vector<std::string>& run_dirs, const std::string& output_dir) {
  const std::vector<Source> sources = read_sources(run_dirs);
  if (sources.empty()) throw Error(LPX_ERR_INVALID_ARGUMENT, "batch-merge needs run directories");
  const RunRecord& first = sources.front().record;
  BatchOptions options;
  options.run_dir = output_dir;
  RunDirectory out(options, RunRecord{first.input, first.input_sha256, ""});

  std::unordered_set<std::string> answered;
  std::size_t duplicates = 0;
  for (const Source& s : sources) {
    for (const char* file : {"results.jsonl", "failures.jsonl"}) {
      JsonlAppender& target = std::string(file) == "results.jsonl" ? out.results() : out.failures();
      for (const std::string& line : read_complete_lines(s.dir / file)) {
        boost::system::error_code ec;
        const boost::json::value v = boost::json::parse(line, ec);
        const std::string key = !ec && v.is_object() ? output_key(v.get_object()) : std::string();
        if (key.empty()) throw Error(LPX_ERR_INVALID_ARGUMENT, (s.dir / file).string() + ": a damaged line");
        if (!answered.insert(key).second) {
          ++duplicates;
          out.log("'" + key + "' is answered again in " + (s.dir / file).string() + "; kept the first");
          continue;
        }
        target.append(line);
      }
    }
  }
  out.results().sync();
  out.failures().sync();

  // Which ids of the input got no answer at all.
  const std::string gaps = missing_shards(sources);
  std::vector<std::string> missing;
  std::uint64_t inputs = 0;
  bool input_checked = false;
  std::error_code exists_error;
  if (fs::exists(first.input, exists_error) && sha256_file(first.input) == first.input_sha256) {
    input_checked = true;
    std::ifstream in(first.input);
    std::string line;
    std::uint64_t number = 0;
    const ItemDefaults defaults{0, openai::RequestLimits{UINT32_MAX, {}}};
    while (std::getline(in, line)) {
      ++number;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      ++inputs;
      const BatchItem item = read_batch_item(number, line, defaults);
      if (!answered.count(item.key)) missing.push_back(item.key);
    }
    std::string listing;
    for (const std::string& key : missing) listing += key + "\n";
    write_file_atomically(out.path() / "missing.txt", listing);
  }
  boost::json::object summary{
      {"status", missing.empty() && input_checked ? "complete" : "incomplete"},
      {"merged_from", boost::json::value_from(run_dirs)},
      {"input", first.input},
      {"input_sha256", first.input_sha256},
      {"counts", {{"inputs", inputs}, {"answered", answered.size()}, {"missing", missing.size()},
                  {"duplicates", duplicates}}},
      {"missing_shards", gaps}};
  out.write_summary(summary);
  log_info("merged " + std::to_string(answered.size()) + " answers into " + out.path().string() +
           (duplicates ? "; " + std::to_string(duplicates) + " duplicate(s) dropped" : std::string()));
  if (!input_checked) {
    throw Error(LPX_ERR_INCOMPLETE, "merged, but the input " + first.input +
                                        " is not readable here (or changed), so missing ids are not known");
  }
  if (!missing.empty()) {
    std::string shown;
    for (std::size_t i = 0; i < missing.size() && i < 10; ++i) shown += (i ? ", " : "") + missing[i];
    throw Error(LPX_ERR_INCOMPLETE,
                std::to_string(missing.size()) + " of " + std::to_string(inputs) + " ids have no answer (" + shown +
                    (missing.size() > 10 ? ", …" : "") + "; all in " + (out.path() / "missing.txt").string() +
                    (gaps.empty() ? "" : "; shards never run: " + gaps) + "). Finish them with: lpx-pipeline batch --resume --run-dir " +
                    out.path().string() + " --input " + first.input + " --model MODEL");
  }
}

}  // namespace lpx::batch
