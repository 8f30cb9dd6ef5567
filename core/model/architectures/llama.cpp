// llama: Llama 2/3.x, SmolLM/SmolLM2, TinyLlama, Mistral (without sliding window).
// RMSNorm, RoPE on adjacent pairs, grouped-query attention, SwiGLU; the output head may be tied
// to the embedding.
#include "model/architectures/llama_family.hpp"

namespace lpx::core {

extern const Architecture kLlamaArchitecture;
const Architecture kLlamaArchitecture{
    "llama",
    [](const Hyperparameters& h) {
      std::vector<ExpectedTensor> tensors;
      add_llama_tensors(h, tensors);
      return tensors;
    },
    [](const ModelFile& file, const Hyperparameters& h) {
      return describe_llama_family(file, h, {.name = "llama",
                                             .rope_mode = LPX_ROPE_NORMAL, .qkv_bias = false});
    }};

}  // namespace lpx::core
