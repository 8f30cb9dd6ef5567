// Process logging on spdlog: level, destination (stderr or a file) and format (text or JSON lines).
#pragma once

#include <string>

#include "util/expected.hpp"

namespace lpx::core {

enum class LogFormat { text, json };

struct LogConfig {
  std::string level = "info";  // trace, debug, info, warn, error, off
  std::string file;            // empty: stderr
  LogFormat format = LogFormat::text;
};

// Installs the default logger. Fails (with a message) on an unknown level or an unwritable file.
Expected<bool> configure_logging(const LogConfig& config);

}  // namespace lpx::core
