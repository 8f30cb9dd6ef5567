// Sampling programs (lpx/kinds/sampling_program.h) on the host: the ground truth for a device
// that runs them. Built on the same operations as the sampler plugins (sampling_ops.hpp), so a
// program picks exactly the token its chain of plugins would.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <lpx/kinds/sampler.h>
#include <lpx/kinds/sampling_program.h>

namespace lpx::reference {

// Empty when `program` is well formed (1..LPX_SAMPLING_MAX_OPS known operations, the last and
// only the last one selecting, finite values in range, uniform in [0, 1)); else what is wrong.
std::string check_sampling_program(const lpx_sampling_program& program);

// The token `program` picks from one row of n_vocab logits. `scratch` holds n_vocab candidates
// (overwritten). The program must pass check_sampling_program.
std::int32_t run_sampling_program(const lpx_sampling_program& program, const float* logits,
                                  std::size_t n_vocab, lpx_token_candidate* scratch);

}  // namespace lpx::reference
