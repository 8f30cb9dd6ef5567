// What the llama-shaped architectures share: the tensors (embedding, final norm, optional
// output head, and per layer the attention and gated feed-forward weights) and their mapping
// onto the transformer description, with the variations they differ by.
#pragma once

#include <cstdint>
#include <vector>

#include "model/architecture.hpp"

namespace lpx::core {

struct LlamaFamily {
  const char* name = nullptr;  // the architecture's (static) name
  std::int32_t rope_mode = 0;  // an lpx_rope_mode
  bool qkv_bias = false;       // attn_{q,k,v}.bias (Qwen2)
};

// The tensors every llama-shaped model has (rope_freqs and the biases optional or per family).
void add_llama_tensors(const Hyperparameters& h, std::vector<ExpectedTensor>& out);

// The description of a llama-shaped model: pre-norm attention with rope on every layer
// (Llama 3 scaling from rope_freqs.weight or the metadata), SwiGLU, the head tied to the
// embedding when output.weight is absent.
Expected<TransformerModel> describe_llama_family(const ModelFile& file, const Hyperparameters& h,
                                                 const LlamaFamily& family);

}  // namespace lpx::core
