// The http transport's options ([transport] table), read once at create. See docs/http-server.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <lpx/cpp/options.hpp>

#include "access_log.hpp"
#include "api_keys.hpp"

namespace lpx::http {

// GPU gauges in /metrics: with the cuda backend (auto), always (on: the server refuses to start
// without NVML), or never.
enum class GpuMetrics { kAuto, kOn, kOff };

struct HttpOptions {
  std::string host = "127.0.0.1";
  std::uint16_t port = 8080;
  std::vector<ApiKey> api_keys;  // from api_key and api_key_file; empty = no auth
  bool allow_public_without_key = false;
  bool metrics_without_key = false;  // GET /metrics needs no key (it shows no request content)
  std::vector<std::string> cors_origins;
  std::size_t max_body_bytes = 1 << 20;
  std::uint32_t max_header_bytes = 16 << 10;
  std::chrono::seconds header_timeout{10};
  std::chrono::seconds idle_timeout{60};
  std::chrono::seconds request_timeout{600};
  std::uint32_t max_queued = 64;
  std::uint32_t max_tokens_limit = 0;  // 0 = the context size
  std::chrono::seconds drain_timeout{30};
  unsigned io_threads = 2;
  std::string model_id;  // empty = the model file's stem
  AccessLogFormat access_log = AccessLogFormat::kText;
  GpuMetrics gpu_metrics = GpuMetrics::kAuto;

  // Throws lpx::Error when api_key_file cannot be read, holds no key or a malformed line, or
  // access_log names no format.
  static HttpOptions read(const Options& options);
};

std::span<const lpx_option_spec> http_option_schema() noexcept;

}  // namespace lpx::http
