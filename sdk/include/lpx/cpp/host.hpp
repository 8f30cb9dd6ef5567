// The host services seen from C++: the host table this plugin received in init, and logging.
#pragma once

#include <string>

#include "lpx/host_api.h"

namespace lpx {

namespace detail {
// One slot per plugin library: the header is compiled into each plugin, whose symbols are hidden.
inline const lpx_host_api*& host_slot() noexcept {
  static const lpx_host_api* host = nullptr;
  return host;
}
}  // namespace detail

// The host table given to this plugin's init; NULL before init and after shutdown.
inline const lpx_host_api* host() noexcept { return detail::host_slot(); }

inline bool log_enabled(lpx_log_level level) noexcept {
  const lpx_host_api* h = host();
  return h != nullptr && h->log_enabled(h->context, level) != 0;
}

inline void log(lpx_log_level level, const std::string& message) noexcept {
  if (const lpx_host_api* h = host()) h->log(h->context, level, message.c_str());
}
inline void log_debug(const std::string& message) noexcept { log(LPX_LOG_DEBUG, message); }
inline void log_info(const std::string& message) noexcept { log(LPX_LOG_INFO, message); }
inline void log_warn(const std::string& message) noexcept { log(LPX_LOG_WARN, message); }
inline void log_error(const std::string& message) noexcept { log(LPX_LOG_ERROR, message); }

}  // namespace lpx
