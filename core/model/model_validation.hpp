// Checks that a model file is a complete, consistent model of an architecture LPX runs:
// hyperparameters agree with each other, every tensor is there with the shape they imply, nothing
// unknown is present, and the vocabulary matches the embedding.
#pragma once

#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"

namespace lpx::core {

// The checked hyperparameters (with n_vocab, tied_output and n_params filled in).
Expected<Hyperparameters> validate_model(const ModelFile& file);

}  // namespace lpx::core
