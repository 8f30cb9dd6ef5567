// The record of a run that a server shows at /v1/info and logs at start, and a batch job writes
// into summary.json (lpx_run_context.run_record_json): which LPX, on what machine (CPU and the
// kernel set the backend runs, OS, GPU driver, CUDA, GPUs), which model files (SHA-256) and the
// pipeline as resolved. Enough to reproduce a configuration or to file a bug report.
#pragma once

#include <string>

#include "pipeline/pipeline.hpp"
#include "util/expected.hpp"

namespace lpx::host {

struct BuildFacts {
  std::string version;  // "0.9.0"
  std::string commit;   // git commit, "+dirty" when modified
  std::string cuda;     // the CUDA toolkit the build used ("toolkit 13.0") or "disabled"
};

// The record as one JSON object (docs/deploy.md lists its fields). Hashes every model file:
// fails naming a file it cannot read.
core::Expected<std::string> run_record_json(const core::Pipeline& pipeline, const BuildFacts& build);

}  // namespace lpx::host
