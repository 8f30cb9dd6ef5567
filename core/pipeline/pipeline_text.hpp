// A validated pipeline written back as TOML with every option's value (defaults included): the
// record of what actually ran, for run summaries and logs. Secrets (string options whose name
// says key, secret or password) are written as "<redacted>".
#pragma once

#include <string>

#include "pipeline/pipeline.hpp"

namespace lpx::core {

std::string resolved_pipeline_toml(const Pipeline& pipeline);
// One section as it appears there ("[backend]\nplugin = ...", "[[models]]\n...").
std::string section_toml(const PipelineSection& section);
// The core's own tables ([engine], [speculative]) that have values; "" when none.
std::string core_tables_toml(const Pipeline& pipeline);

}  // namespace lpx::core
