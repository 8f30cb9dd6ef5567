// The architectures LPX runs, each described by the tensors a model of it must have.
// One file per architecture under architectures/; the list in architecture.cpp names them all,
// so adding the next one is: write its file, add one line there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/hyperparameters.hpp"

namespace lpx::core {

struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> dims;  // dims[0] contiguous, as in lpx_tensor_view
  bool required = true;
};

struct Architecture {
  const char* name;  // general.architecture
  // How rotary embeddings pair dims: LPX_ROPE_NORMAL (adjacent) or LPX_ROPE_NEOX (halves).
  std::int32_t rope_mode;
  // Every tensor a model of this architecture may have, with its shape.
  std::vector<ExpectedTensor> (*tensors)(const Hyperparameters& h);
};

const Architecture* find_architecture(std::string_view name);
std::vector<std::string> architecture_names();

// Shared by the llama family: embeddings, final norm, output head, and for every layer the
// attention and SwiGLU feed-forward weights.
void add_llama_tensors(const Hyperparameters& h, std::vector<ExpectedTensor>& out);

}  // namespace lpx::core
