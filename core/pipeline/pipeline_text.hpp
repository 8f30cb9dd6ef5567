// A validated pipeline written back as TOML with every option's value (defaults included): the
// record of what actually ran, for run summaries and logs. Secrets (options whose name says
// key, secret or password) are written as "<redacted>".
#pragma once

#include <string>

#include "pipeline/pipeline.hpp"

namespace lpx::core {

std::string resolved_pipeline_toml(const Pipeline& pipeline);

}  // namespace lpx::core
