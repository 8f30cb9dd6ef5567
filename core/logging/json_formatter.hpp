// One JSON object per log line: {"time":..., "level":..., "logger":..., "message":...}.
// Messages are escaped properly, so log shippers can parse any plugin's output.
#pragma once

#include <memory>

#include <spdlog/formatter.h>

namespace lpx::core {

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& message, spdlog::memory_buf_t& out) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

}  // namespace lpx::core
