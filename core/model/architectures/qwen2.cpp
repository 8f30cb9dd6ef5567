// qwen2: the llama layout with NeoX-style RoPE (rotating halves) and biases on the Q, K and V
// projections.
#include "model/architectures/llama_family.hpp"

namespace lpx::core {

extern const Architecture kQwen2Architecture;
const Architecture kQwen2Architecture{
    "qwen2",
    [](const Hyperparameters& h) {
      std::vector<ExpectedTensor> tensors;
      add_llama_tensors(h, tensors);
      for (std::uint32_t layer = 0; layer < h.n_layer; ++layer) {
        const std::string b = "blk." + std::to_string(layer) + ".";
        tensors.push_back({b + "attn_q.bias", {std::int64_t{h.n_head} * h.head_dim}, true});
        tensors.push_back({b + "attn_k.bias", {std::int64_t{h.n_head_kv} * h.head_dim}, true});
        tensors.push_back({b + "attn_v.bias", {std::int64_t{h.n_head_kv} * h.head_dim_v}, true});
      }
      return tensors;
    },
    [](const ModelFile& file, const Hyperparameters& h) {
      return describe_llama_family(file, h, {.name = "qwen2",
                                             .rope_mode = LPX_ROPE_NEOX, .qkv_bias = true});
    }};

}  // namespace lpx::core
