#include "batch_options.hpp"

#include <charconv>

#include <lpx/cpp/status.hpp>

namespace lpx::batch {
namespace {

constexpr lpx_option_spec kOptions[] = {
    lpx::option("input", LPX_OPTION_STRING, "\"\"",
                "JSONL file: one {\"id\", \"prompt\"|\"messages\", …} or OpenAI batch request "
                "per line (required unless merge is set)"),
    lpx::option("merge", LPX_OPTION_STRING_LIST, "[]",
                "Instead of running: combine these run directories (shards) into run_dir"),
    lpx::option("run_dir", LPX_OPTION_STRING, "\"\"",
                "Output directory; empty = outputs/<UTC time>-<input hash>/"),
    lpx::option("resume", LPX_OPTION_BOOL, "false",
                "Continue the run in run_dir: skip inputs already in results/failures"),
    lpx::option("shard", LPX_OPTION_STRING, "\"\"",
                "I/N: process only the inputs whose id hashes to shard I of N (0-based)"),
    lpx::in_range(lpx::option("max_in_flight", LPX_OPTION_INT, "0",
                              "Inputs submitted at once; 0 = twice [model] max_sequences"),
                  0, 100000),
    lpx::in_range(lpx::option("item_timeout_s", LPX_OPTION_FLOAT, "600",
                              "Seconds one attempt may take before it is cancelled and retried"),
                  0.001, 86400),
    lpx::in_range(lpx::option("max_attempts", LPX_OPTION_INT, "3",
                              "Attempts per input for transient failures (timeouts, cache)"),
                  1, 100),
    lpx::in_range(lpx::option("retry_backoff_ms", LPX_OPTION_INT, "500",
                              "Wait before the first retry; doubles with each attempt"),
                  0, 600000),
    lpx::in_range(lpx::option("max_tokens", LPX_OPTION_INT, "0",
                              "max_tokens of lines that do not set one; 0 = until the model "
                              "stops or the context ends"),
                  0, 4294967295.0),
    lpx::one_of(lpx::option("progress", LPX_OPTION_STRING, "\"auto\"",
                            "auto = a live bar on a terminal, else a log line every "
                            "log_interval_s; bar; log; off"),
                "auto|bar|log|off"),
    lpx::in_range(lpx::option("log_interval_s", LPX_OPTION_INT, "5",
                              "Seconds between progress log lines"),
                  1, 3600),
};

}  // namespace

std::optional<Shard> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  Shard s;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto a = std::from_chars(begin, begin + slash, s.index);
  auto b = std::from_chars(begin + slash + 1, end, s.count);
  if (a.ec != std::errc() || a.ptr != begin + slash || b.ec != std::errc() || b.ptr != end ||
      s.count == 0 || s.index >= s.count) {
    return std::nullopt;
  }
  return s;
}

BatchOptions BatchOptions::read(const Options& options) {
  BatchOptions out;
  out.input = options.get_string("input");
  out.merge = options.get_string_list("merge");
  if (out.input.empty() && out.merge.empty()) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "set input (the JSONL file to run), or merge");
  }
  out.run_dir = options.get_string("run_dir");
  out.resume = options.get_bool("resume");
  if (const std::string shard = options.get_string("shard"); !shard.empty()) {
    out.shard = parse_shard(shard);
    if (!out.shard) {
      throw Error(LPX_ERR_INVALID_ARGUMENT,
                  "shard '" + shard + "' must be I/N with 0 <= I < N, e.g. 0/4");
    }
  }
  out.max_in_flight = static_cast<std::uint32_t>(options.get_int("max_in_flight"));
  out.item_timeout = std::chrono::milliseconds(
      static_cast<std::int64_t>(options.get_float("item_timeout_s") * 1000.0 + 0.5));
  out.max_attempts = static_cast<std::uint32_t>(options.get_int("max_attempts"));
  out.retry_backoff = std::chrono::milliseconds(options.get_int("retry_backoff_ms"));
  out.default_max_tokens = static_cast<std::uint32_t>(options.get_int("max_tokens"));
  const std::string progress = options.get_string("progress");
  out.progress = progress == "bar"   ? ProgressMode::kBar
                 : progress == "log" ? ProgressMode::kLog
                 : progress == "off" ? ProgressMode::kOff
                                     : ProgressMode::kAuto;
  out.log_interval = std::chrono::seconds(options.get_int("log_interval_s"));
  return out;
}

std::span<const lpx_option_spec> batch_option_schema() noexcept { return kOptions; }

}  // namespace lpx::batch
