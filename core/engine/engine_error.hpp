// The exception the engine uses internally for a failed step (a backend kernel error, a sampler
// error). It never leaves the engine: requests end with LPX_FINISH_ERROR carrying its message.
#pragma once

#include <stdexcept>

namespace lpx::core {

class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace lpx::core
