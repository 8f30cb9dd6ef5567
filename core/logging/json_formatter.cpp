#include "logging/json_formatter.hpp"

#include <chrono>
#include <string_view>

#include <boost/json/serialize.hpp>
#include <boost/json/string.hpp>
#include <fmt/chrono.h>
#include <fmt/format.h>

namespace lpx::core {
namespace {

void append(spdlog::memory_buf_t& out, std::string_view text) {
  out.append(text.data(), text.data() + text.size());
}

void append_json_string(spdlog::memory_buf_t& out, std::string_view text) {
  append(out, boost::json::serialize(boost::json::string(text)));
}

}  // namespace

void JsonFormatter::format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& out) {
  using namespace std::chrono;
  const auto since_epoch = message.time.time_since_epoch();
  const auto millis = duration_cast<milliseconds>(since_epoch).count() % 1000;
  const std::time_t seconds = duration_cast<std::chrono::seconds>(since_epoch).count();
  append(out, fmt::format("{{\"time\":\"{:%Y-%m-%dT%H:%M:%S}.{:03}Z\",\"level\":\"", fmt::gmtime(seconds), millis));
  const auto level = spdlog::level::to_string_view(message.level);
  append(out, std::string_view(level.data(), level.size()));
  append(out, "\",\"logger\":");
  append_json_string(out, std::string_view(message.logger_name.data(), message.logger_name.size()));
  append(out, ",\"message\":");
  append_json_string(out, std::string_view(message.payload.data(), message.payload.size()));
  append(out, "}\n");
}

std::unique_ptr<spdlog::formatter> JsonFormatter::clone() const {
  return std::make_unique<JsonFormatter>();
}

}  // namespace lpx::core
