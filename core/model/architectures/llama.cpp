// llama: Llama 2/3.x, SmolLM/SmolLM2, TinyLlama, Mistral (without sliding window).
// RMSNorm, RoPE, grouped-query attention, SwiGLU; the output head may be tied to the embedding.
#include "lpx/kinds/quant_backend.h"
#include "model/architecture.hpp"

namespace lpx::core {

extern const Architecture kLlamaArchitecture;
const Architecture kLlamaArchitecture{"llama", LPX_ROPE_NORMAL, [](const Hyperparameters& h) {
                                        std::vector<ExpectedTensor> tensors;
                                        add_llama_tensors(h, tensors);
                                        return tensors;
                                      }};

}  // namespace lpx::core
