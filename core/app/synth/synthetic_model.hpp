// A synthetic model: a named real model's architecture, shapes and vocabulary size, with random
// weights in the chosen tensor type, written as GGUF (see model_shapes.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lpx/kinds/tensor.h"
#include "synth/model_shapes.hpp"
#include "util/expected.hpp"

namespace lpx::core::synth {

// "F16", "bf16", "Q8_0", "q4_k" … -> the type; nullopt for the names synth does not write.
std::optional<lpx_tensor_type> synth_type(const std::string& name);
std::string synth_type_names();  // "F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K"

struct SynthResult {
  std::uint64_t bytes = 0;
  std::uint64_t parameters = 0;
  std::string notes;  // e.g. which tensors fell back to another type
};

Expected<SynthResult> write_synthetic_model(const ModelShape& shape, lpx_tensor_type type,
                                            std::uint64_t seed, const std::string& path);

// A model argument as `bench --model` takes it: a file path, returned as it is, or
// synth:NAME:TYPE, written once (seed 1) into the temp directory as lpx-synth-v3-NAME-TYPE.gguf
// (v2: the layout version) and reused (the same name, type and seed give the same bytes). The file appears whole or not
// at all: it is written under another name and renamed.
Expected<std::string> resolve_model_spec(const std::string& model);

}  // namespace lpx::core::synth
