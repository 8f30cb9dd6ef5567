// qwen2: the llama layout plus biases on the Q, K and V projections.
#include "lpx/kinds/quant_backend.h"
#include "model/architecture.hpp"

namespace lpx::core {

extern const Architecture kQwen2Architecture;
const Architecture kQwen2Architecture{
    "qwen2", LPX_ROPE_NEOX, [](const Hyperparameters& h) {
      std::vector<ExpectedTensor> tensors;
      add_llama_tensors(h, tensors);
      for (std::uint32_t layer = 0; layer < h.n_layer; ++layer) {
        const std::string b = "blk." + std::to_string(layer) + ".";
        tensors.push_back({b + "attn_q.bias", {std::int64_t{h.n_head} * h.head_dim}, true});
        tensors.push_back({b + "attn_k.bias", {std::int64_t{h.n_head_kv} * h.head_dim}, true});
        tensors.push_back({b + "attn_v.bias", {std::int64_t{h.n_head_kv} * h.head_dim_v}, true});
      }
      return tensors;
    }};

}  // namespace lpx::core
