// `batch-merge`: the run directories of a sharded job combined into one run directory, as if one
// machine had run the whole input (so `batch --resume` on it can finish what is missing). The
// inputs must come from the same input file; an id answered in two directories is reported and
// kept once; ids of the input answered nowhere are listed in missing.txt.
#pragma once

#include <string>
#include <vector>

namespace lpx::batch {

// Throws lpx::Error for unusable directories, and LPX_ERR_INCOMPLETE when ids are missing
// (after writing everything else).
void merge_run_directories(const std::vector<std::string>& run_dirs, const std::string& output_dir);

}  // namespace lpx::batch
