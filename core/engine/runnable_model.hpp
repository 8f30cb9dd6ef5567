// A model file as the engine will run it: checked (hyperparameters, every tensor's shape and
// extent), described for the context it runs at, and every feature and weight type it needs
// checked against the backend, before anything is sized or loaded (a backend never sees a model
// it cannot run). The engine's model and a speculative draft model both go through it.
#pragma once

#include <cstdint>

#include "engine/backend.hpp"
#include "engine/engine_config.hpp"
#include "engine/kv_cache.hpp"
#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "model/transformer_model.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct RunnableModel {
  Hyperparameters h;
  TransformerModel model;
  std::uint32_t context_size = 0;  // positions per sequence it was described for
};

// `context_size` 0 means the trained context, at most 8192 positions. Errors start with the
// file's path.
Expected<RunnableModel> describe_runnable(const ModelFile& file, std::uint32_t context_size,
                                          const Backend& backend);

// The KV cache `model` runs with under `config`: its layers and heads, in blocks of
// config.block_size, enough for config.kv_cache_tokens positions, on the host.
KvCacheShape kv_cache_shape(const TransformerModel& model, const EngineConfig& config);

// Whether a matrix product of the model takes float (F32/F16/BF16) weights.
bool has_float_matmuls(const lpx_transformer_desc& d);

}  // namespace lpx::core
