// The access log: one line per request at info level in the process log (stderr, or the global
// --log-file), text or JSON, written when the request has ended (its response sent, its
// generation finished), with its id, client, key id (never the key), model, endpoint, status,
// token counts, time to first token, duration and finish reason.
//
// An AccessEntry is shared by everyone who learns something about the request (the connection,
// the API, the generation's sink); the line is written when the last of them lets go of it,
// which is exactly when the request has ended, whichever side finished last.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace lpx::http {

enum class AccessLogFormat { kOff, kText, kJson };

// "off", "text" or "json"; nullopt otherwise.
std::optional<AccessLogFormat> access_log_format(std::string_view name) noexcept;

struct AccessRecord {
  std::string request_id;
  std::string client;    // "address:port"
  std::string method;    // "POST", "GET", "WS" (a WebSocket message)
  std::string endpoint;  // the route label (Api::endpoint_label)
  std::string key_id;    // empty: no key configured
  std::string model;     // empty: not a model request
  int status = 0;        // 0: no response was sent (the client left first)
  bool generation = false;  // the token fields below apply
  std::uint64_t prompt_tokens = 0, cached_tokens = 0, completion_tokens = 0;
  std::optional<double> ttft_ms;  // of the first choice that produced a token
  std::string finish_reason;      // of the first choice; "timeout", "cancelled", "error" too
};

// The line for `record` in `format` (kText or kJson), without a trailing newline.
std::string access_line(const AccessRecord& record, AccessLogFormat format, double duration_ms);

// X-Request-Id: the client's value when it is 1-128 characters of [A-Za-z0-9._:/=+-] (safe to log
// and echo), else a new random one (16 hex digits).
std::string request_id(std::string_view client_value);

class AccessEntry {
 public:
  AccessEntry(AccessLogFormat format, AccessRecord record);
  ~AccessEntry();  // writes the line, then runs on_end
  AccessEntry(const AccessEntry&) = delete;
  AccessEntry& operator=(const AccessEntry&) = delete;

  AccessRecord record;
  // Runs once the request has ended, with the final record (e.g. charges the key's tokens).
  std::function<void(const AccessRecord&)> on_end;

 private:
  AccessLogFormat format_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lpx::http
