// The architectures LPX runs. Each is one file under architectures/ that says which tensors a
// model of it has and how its model file maps onto the architecture-neutral description of
// lpx/kinds/transformer.h (TransformerModel), which is all the engine and the backends see.
// Adding a dense decoder architecture is that file, its line in architecture.cpp's list and
// its tests: no engine or backend change, as long as it only combines the description's
// features.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "model/transformer_model.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> dims;  // dims[0] contiguous, as in lpx_tensor_view
  bool required = true;
};

// What the engine will run a model with, where a description depends on it (Phi-3's rope
// factors depend on the context size).
struct RunShape {
  std::uint32_t context_size = 0;  // positions per sequence
};

struct Architecture {
  const char* name;  // general.architecture
  // Every tensor a model of this architecture may have, with its shape (model_validation.cpp
  // checks the file against it before describe runs).
  std::vector<ExpectedTensor> (*tensors)(const Hyperparameters& h);
  // The validated file as a TransformerModel, with the architecture's own metadata read and
  // checked; errors name the key or tensor.
  Expected<TransformerModel> (*describe)(const ModelFile& file, const Hyperparameters& h,
                                         const RunShape& run);
};

// What every architecture's description starts from: the dimensions and norm epsilon of `h`,
// attention scaled by 1/sqrt(head_dim), SwiGLU, no scales or caps; `name` (static) for messages.
// The architecture then sets its tensors, layers and whatever it does differently.
TransformerModel start_description(const char* name, const Hyperparameters& h);

const Architecture* find_architecture(std::string_view name);
std::vector<std::string> architecture_names();

// Adds an architecture beside the built-in ones (a test's, or an embedding application's);
// refuses a name already known. Not thread-safe against find_architecture: register before
// any model is opened.
Expected<bool> register_architecture(const Architecture& architecture);
void unregister_architecture(std::string_view name);

}  // namespace lpx::core
