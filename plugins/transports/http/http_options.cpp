#include "http_options.hpp"

#include <fstream>

#include <lpx/cpp/status.hpp>

namespace lpx::http {
namespace {

constexpr double kMaxU32 = 4294967295.0;

constexpr lpx_option_spec kOptions[] = {
    lpx::option("host", LPX_OPTION_STRING, "\"127.0.0.1\"",
                "Address to bind; a non-loopback address needs an API key"),
    lpx::in_range(lpx::option("port", LPX_OPTION_INT, "8080", "TCP port; 0 = any free port"), 0,
                  65535),
    lpx::option("api_key", LPX_OPTION_STRING, "\"\"",
                "Bearer key API requests must carry; empty = none"),
    lpx::option("api_key_file", LPX_OPTION_STRING, "\"\"",
                "File with one API key per line, each optionally followed by id=NAME, rpm=N "
                "(requests per minute) and tpm=N (tokens per minute); '#' comments; empty = none"),
    lpx::option("allow_public_without_key", LPX_OPTION_BOOL, "false",
                "Permit a non-loopback host without any API key"),
    lpx::option("metrics_without_key", LPX_OPTION_BOOL, "false",
                "Serve GET /metrics without an API key (for a Prometheus that scrapes pods)"),
    lpx::option("cors_origins", LPX_OPTION_STRING_LIST, "[]",
                "Origins allowed by CORS (\"*\" = any); empty = no CORS headers"),
    lpx::in_range(lpx::option("max_body_bytes", LPX_OPTION_INT, "1048576",
                              "Largest request body; larger gets 413"),
                  64, 1 << 30),
    lpx::in_range(lpx::option("max_header_bytes", LPX_OPTION_INT, "16384",
                              "Largest request header block; larger gets 431"),
                  1024, 1 << 20),
    lpx::in_range(lpx::option("header_timeout_s", LPX_OPTION_INT, "10",
                              "Seconds a request's headers (and body) may take to arrive"),
                  1, 3600),
    lpx::in_range(lpx::option("idle_timeout_s", LPX_OPTION_INT, "60",
                              "Seconds an idle keep-alive connection stays open"),
                  1, 86400),
    lpx::in_range(lpx::option("request_timeout_s", LPX_OPTION_INT, "600",
                              "Deadline of one generation request (504 after it)"),
                  1, 86400),
    lpx::in_range(lpx::option("max_queued", LPX_OPTION_INT, "64",
                              "Requests waiting beyond the running sequences; more get 429"),
                  0, 1e6),
    lpx::in_range(lpx::option("max_tokens_limit", LPX_OPTION_INT, "0",
                              "Largest max_tokens a request may ask for; 0 = the context size"),
                  0, kMaxU32),
    lpx::in_range(lpx::option("drain_timeout_s", LPX_OPTION_INT, "30",
                              "On SIGTERM: seconds in-flight requests may take to finish"),
                  0, 3600),
    lpx::in_range(lpx::option("io_threads", LPX_OPTION_INT, "2", "Network threads"), 1, 64),
    lpx::option("model_id", LPX_OPTION_STRING, "\"\"",
                "Model id reported by /v1/models; empty = the model file's stem"),
    lpx::option("access_log", LPX_OPTION_STRING, "\"text\"",
                "One line per request in the process log at info level: text, json or off"),
    lpx::option("gpu_metrics", LPX_OPTION_STRING, "\"auto\"",
                "GPU gauges from NVML in /metrics: auto (with the cuda backend), on or off"),
};

std::vector<ApiKey> read_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(LPX_ERR_NOT_FOUND, "api_key_file " + path + ": cannot be read");
  std::vector<ApiKey> keys;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    try {
      keys.push_back(parse_key_line(line));
      for (std::size_t k = 0; k + 1 < keys.size(); ++k) {
        if (keys[k].id == keys.back().id) {  // limits and log lines are kept per id
          throw Error(LPX_ERR_INVALID_ARGUMENT, "id '" + keys.back().id + "' names an earlier key too");
        }
      }
    } catch (const Error& e) {
      throw Error(e.code(), "api_key_file " + path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  if (keys.empty()) throw Error(LPX_ERR_INVALID_ARGUMENT, "api_key_file " + path + ": holds no key");
  return keys;
}

}  // namespace

HttpOptions HttpOptions::read(const Options& options) {
  HttpOptions out;
  out.host = options.get_string("host");
  out.port = static_cast<std::uint16_t>(options.get_int("port"));
  if (std::string key = options.get_string("api_key"); !key.empty()) {
    out.api_keys.push_back({key, default_key_id(key), {}});
  }
  if (std::string file = options.get_string("api_key_file"); !file.empty()) {
    for (ApiKey& key : read_key_file(file)) out.api_keys.push_back(std::move(key));
  }
  out.allow_public_without_key = options.get_bool("allow_public_without_key");
  out.metrics_without_key = options.get_bool("metrics_without_key");
  out.cors_origins = options.get_string_list("cors_origins");
  out.max_body_bytes = static_cast<std::size_t>(options.get_int("max_body_bytes"));
  out.max_header_bytes = static_cast<std::uint32_t>(options.get_int("max_header_bytes"));
  out.header_timeout = std::chrono::seconds(options.get_int("header_timeout_s"));
  out.idle_timeout = std::chrono::seconds(options.get_int("idle_timeout_s"));
  out.request_timeout = std::chrono::seconds(options.get_int("request_timeout_s"));
  out.max_queued = static_cast<std::uint32_t>(options.get_int("max_queued"));
  out.max_tokens_limit = static_cast<std::uint32_t>(options.get_int("max_tokens_limit"));
  out.drain_timeout = std::chrono::seconds(options.get_int("drain_timeout_s"));
  out.io_threads = static_cast<unsigned>(options.get_int("io_threads"));
  out.model_id = options.get_string("model_id");
  const std::string access_log = options.get_string("access_log");
  const std::optional<AccessLogFormat> format = access_log_format(access_log);
  if (!format) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "access_log must be text, json or off, not '" + access_log + "'");
  }
  out.access_log = *format;
  const std::string gpu = options.get_string("gpu_metrics");
  if (gpu == "auto") {
    out.gpu_metrics = GpuMetrics::kAuto;
  } else if (gpu == "on") {
    out.gpu_metrics = GpuMetrics::kOn;
  } else if (gpu == "off") {
    out.gpu_metrics = GpuMetrics::kOff;
  } else {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "gpu_metrics must be auto, on or off, not '" + gpu + "'");
  }
  return out;
}

std::span<const lpx_option_spec> http_option_schema() noexcept { return kOptions; }

}  // namespace lpx::http
