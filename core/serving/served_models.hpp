// A pipeline's models as the ModelPool serves them: each [model] or [[models]] table becomes a
// ServedModel that loads its own engine (engine_builder.hpp), named by its `name` key or its
// file's stem, and sized up front from the file and its KV cache; [engine] gives the pool's
// keep_alive_s and memory_budget_mb.
#pragma once

#include <vector>

#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "serving/model_pool.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// Opens every model file once to check it and estimate its memory. Empty for a pipeline with
// no model. `registry` must outlive the models' engines.
Expected<std::vector<ServedModel>> served_models(const Pipeline& pipeline, PluginRegistry& registry);

// [engine]'s keep_alive_s and memory_budget_mb; a budget of 0 means the memory this process may
// use now (MemAvailable, within its container's cgroup limit) for CPU backends, and no limit for
// device backends, whose loads fail cleanly when the device is full.
PoolSettings pool_settings(const Pipeline& pipeline);

}  // namespace lpx::core
