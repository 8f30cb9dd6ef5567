#include "access_log.hpp"

#include <cstdio>
#include <random>

#include <boost/json.hpp>
#include <lpx/cpp/host.hpp>

namespace lpx::http {
namespace {

bool id_character(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("._:/=+-").find(c) != std::string_view::npos;
}

std::string fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string or_dash(const std::string& value) { return value.empty() ? "-" : value; }

}  // namespace

std::optional<AccessLogFormat> access_log_format(std::string_view name) noexcept {
  if (name == "off") return AccessLogFormat::kOff;
  if (name == "text") return AccessLogFormat::kText;
  if (name == "json") return AccessLogFormat::kJson;
  return std::nullopt;
}

std::string access_line(const AccessRecord& r, AccessLogFormat format, double duration_ms) {
  if (format == AccessLogFormat::kJson) {
    boost::json::object line{{"event", "access"},
                             {"request_id", r.request_id},
                             {"client", r.client},
                             {"method", r.method},
                             {"endpoint", r.endpoint},
                             {"key_id", r.key_id.empty() ? boost::json::value() : boost::json::value(r.key_id)},
                             {"model", r.model.empty() ? boost::json::value() : boost::json::value(r.model)},
                             {"status", r.status},
                             {"duration_ms", duration_ms}};
    if (r.generation) {
      line["prompt_tokens"] = r.prompt_tokens;
      line["cached_tokens"] = r.cached_tokens;
      line["completion_tokens"] = r.completion_tokens;
      line["ttft_ms"] = r.ttft_ms ? boost::json::value(*r.ttft_ms) : boost::json::value();
      line["finish_reason"] = r.finish_reason.empty() ? boost::json::value() : boost::json::value(r.finish_reason);
    }
    return boost::json::serialize(line);
  }
  std::string line = "access: id=" + r.request_id + " client=" + r.client + " method=" + r.method +
                     " endpoint=" + r.endpoint + " key=" + or_dash(r.key_id) +
                     " model=" + or_dash(r.model) + " status=" + std::to_string(r.status);
  if (r.generation) {
    line += " prompt_tokens=" + std::to_string(r.prompt_tokens) +
            " cached_tokens=" + std::to_string(r.cached_tokens) +
            " completion_tokens=" + std::to_string(r.completion_tokens) +
            " ttft_ms=" + (r.ttft_ms ? fixed(*r.ttft_ms) : "-") +
            " finish=" + or_dash(r.finish_reason);
  }
  return line + " duration_ms=" + fixed(duration_ms);
}

std::string request_id(std::string_view client_value) {
  bool usable = !client_value.empty() && client_value.size() <= 128;
  for (char c : client_value) usable = usable && id_character(c);
  if (usable) return std::string(client_value);
  thread_local std::mt19937_64 random{std::random_device{}()};
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(random()));
  return text;
}

AccessEntry::AccessEntry(AccessLogFormat format, AccessRecord r)
    : record(std::move(r)), format_(format), start_(std::chrono::steady_clock::now()) {}

AccessEntry::~AccessEntry() {
  try {
    if (format_ != AccessLogFormat::kOff) {
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
      log_info(access_line(record, format_, ms));
    }
    if (on_end) on_end(record);
  } catch (...) {  // a destructor must not throw; a lost log line is the lesser harm
  }
}

}  // namespace lpx::http
