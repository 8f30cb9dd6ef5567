// The exception the engine uses internally for a failed step or set-up (a backend kernel error,
// a sampler error). It never leaves the engine: requests end with LPX_FINISH_ERROR carrying its
// message and code, and Engine::create returns it as a Status.
#pragma once

#include <new>
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

// The code a failed step's exception carries: the backend's own (a lost device stays
// UNAVAILABLE, not INTERNAL), out of memory, or internal.
inline lpx_status_code status_code_of(const std::exception& e) {
  if (const auto* engine_error = dynamic_cast<const EngineError*>(&e)) return engine_error->code();
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) return LPX_ERR_OUT_OF_MEMORY;
  return LPX_ERR_INTERNAL;
}

}  // namespace lpx::core
