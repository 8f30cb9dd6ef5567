// Rope frequency factors that a model file states as metadata rather than as a tensor.
#pragma once

#include <vector>

#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// Llama 3's frequency-dependent scaling ({arch}.rope.scaling.*): n_rot/2 divisors of the
// rotation frequencies, as lpx_rope_params.freq_factors takes them.
Expected<std::vector<float>> llama3_rope_factors(const ModelFile& file, const Hyperparameters& h);

}  // namespace lpx::core
