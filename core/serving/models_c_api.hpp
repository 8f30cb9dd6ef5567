// The C function table (lpx/models.h) through which transports reach a ModelPool. An lpx_models*
// handed to a transport is the ModelPool itself.
#pragma once

#include "lpx/models.h"
#include "serving/model_pool.hpp"

namespace lpx::core {

const lpx_models_api& models_c_api() noexcept;
inline lpx_models* to_c(ModelPool& pool) noexcept { return reinterpret_cast<lpx_models*>(&pool); }

}  // namespace lpx::core
