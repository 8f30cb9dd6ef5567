// The C function table (lpx/engine.h) through which transports drive an Engine. An lpx_engine*
// handed to a transport is the Engine itself.
#pragma once

#include "engine/engine.hpp"
#include "lpx/engine.h"

namespace lpx::core {

const lpx_engine_api& engine_c_api() noexcept;
inline lpx_engine* to_c(Engine& engine) noexcept { return reinterpret_cast<lpx_engine*>(&engine); }

}  // namespace lpx::core
