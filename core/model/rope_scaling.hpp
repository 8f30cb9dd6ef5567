// Rope frequency factors that a model file states as metadata rather than as a tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// Llama 3's rope_scaling (config.json rope_type "llama3"); the defaults are Llama 3.1/3.2's.
struct Llama3RopeScaling {
  double factor = 32.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;  // must exceed low_freq_factor
  double original_context = 8192.0;
};

// The n_rot/2 divisors of the rotation frequencies, as lpx_rope_params.freq_factors takes them
// and as convert_hf_to_gguf.py writes them into rope_freqs.weight.
std::vector<float> llama3_rope_divisors(double freq_base, std::uint32_t n_rot, const Llama3RopeScaling& s);

// The same from a file's {arch}.rope.scaling.* metadata (older GGUFs without rope_freqs.weight).
Expected<std::vector<float>> llama3_rope_factors(const ModelFile& file, const Hyperparameters& h);

}  // namespace lpx::core
