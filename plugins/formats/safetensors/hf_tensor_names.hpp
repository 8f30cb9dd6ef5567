// Hugging Face tensor names to the GGUF names the core looks up:
// "model.layers.3.self_attn.q_proj.weight" -> "blk.3.attn_q.weight".
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "hf_config.hpp"

namespace lpx::safetensors {

enum class TensorRole {
  plain,    // used as stored
  query,    // attention q projection or bias (reordered for Llama-style rope)
  key,      // attention k projection or bias (reordered for Llama-style rope)
  norm,     // an RMSNorm weight (Gemma stores weight - 1)
  skipped,  // not a weight the model needs (rotary caches that old checkpoints saved)
};

struct MappedName {
  std::string gguf;
  TensorRole role = TensorRole::plain;
};

// The GGUF name and role of `hf_name` in a model of `arch`; nullopt when the name is not one
// of the architecture's tensors.
std::optional<MappedName> map_tensor_name(std::string_view hf_name, const HfArchitecture& arch);

}  // namespace lpx::safetensors
