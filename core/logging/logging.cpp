#include "logging/logging.hpp"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "logging/json_formatter.hpp"

namespace lpx::core {

Expected<bool> configure_logging(const LogConfig& config) {
  const spdlog::level::level_enum level = spdlog::level::from_str(config.level);
  // from_str maps anything unknown to "off"; only accept "off" when asked for it.
  if (level == spdlog::level::off && config.level != "off") {
    return invalid_argument("unknown log level '" + config.level +
                      "' (use trace, debug, info, warn, error or off)");
  }
  spdlog::sink_ptr sink;
  if (config.file.empty()) {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  } else {
    try {
      sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(config.file);
    } catch (const spdlog::spdlog_ex& e) {
      return io_error("cannot open log file '" + config.file + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>("lpx", std::move(sink));
  if (config.format == LogFormat::json) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%-5l%$ %v");
  }
  logger->set_level(level);
  // Info too: the HTTP server's access line must reach a --log-file when its request ends.
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(std::move(logger));
  return true;
}

}  // namespace lpx::core
