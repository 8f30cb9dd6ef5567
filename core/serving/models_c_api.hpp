// The C function table (lpx/models.h) through which transports reach a ModelPool. An lpx_models*
// handed to a transport is the ModelPool itself.
#pragma once

#include <cstdint>

#include "lpx/models.h"
#include "serving/model_pool.hpp"

namespace lpx::core {

// The table for a transport built against ABI 2.`caller_abi_minor`: before 2.7 it cannot pass a
// LoRA adapter on to its requests, so its table lists no adapters and refuses names that select
// one (never answering them with the model alone).
const lpx_models_api& models_c_api(std::uint32_t caller_abi_minor) noexcept;
inline lpx_models* to_c(ModelPool& pool) noexcept { return reinterpret_cast<lpx_models*>(&pool); }

}  // namespace lpx::core
