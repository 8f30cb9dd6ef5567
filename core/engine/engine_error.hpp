// The exception the engine uses internally for a failed step or set-up (a backend kernel error,
// a sampler error). It never leaves the engine: requests end with LPX_FINISH_ERROR carrying its
// message and code, and Engine::create returns it as a Status.
#pragma once

#include <stdexcept>
#include <string>

#include "lpx/status.h"

namespace lpx::core {

class EngineError : public std::runtime_error {
 public:
  explicit EngineError(const std::string& message, lpx_status_code code = LPX_ERR_INTERNAL)
      : std::runtime_error(message), code_(code) {}
  // The plugin's code where a plugin failed (out of memory, unsupported...), else INTERNAL.
  lpx_status_code code() const noexcept { return code_; }

 private:
  lpx_status_code code_;
};

}  // namespace lpx::core
