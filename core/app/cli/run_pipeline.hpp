// Running a pipeline, shared by `run` (a file) and shorthands that write one (`serve`): signals,
// plugin registry, validation, instances, the transport's run, exit code.
#pragma once

#include <functional>

#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

// `load` reads and validates the pipeline through the registry it is given; its diagnostics are
// printed and exit with the usage-error code.
using PipelineLoader = std::function<core::Expected<core::Pipeline, core::Diagnostics>(core::PluginRegistry&)>;
int run_pipeline(const PipelineLoader& load, bool show_stats);

}  // namespace lpx::cli
