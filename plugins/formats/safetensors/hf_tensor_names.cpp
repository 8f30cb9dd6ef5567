#include "hf_tensor_names.hpp"

#include <charconv>

namespace lpx::safetensors {
namespace {

struct Rule {
  std::string_view hf;    // the name's tail after "model.layers.N." (or the whole name)
  std::string_view gguf;  // after "blk.N."
  TensorRole role;
};

// Tensors outside the layers.
constexpr Rule kGlobal[] = {
    {"model.embed_tokens.weight", "token_embd.weight", TensorRole::plain},
    {"model.norm.weight", "output_norm.weight", TensorRole::norm},
    {"lm_head.weight", "output.weight", TensorRole::plain},
};

// Tensors of one layer, common to every family.
constexpr Rule kLayer[] = {
    {"input_layernorm.weight", "attn_norm.weight", TensorRole::norm},
    {"self_attn.q_proj.weight", "attn_q.weight", TensorRole::query},
    {"self_attn.k_proj.weight", "attn_k.weight", TensorRole::key},
    {"self_attn.v_proj.weight", "attn_v.weight", TensorRole::plain},
    {"self_attn.q_proj.bias", "attn_q.bias", TensorRole::query},
    {"self_attn.k_proj.bias", "attn_k.bias", TensorRole::key},
    {"self_attn.v_proj.bias", "attn_v.bias", TensorRole::plain},
    {"self_attn.o_proj.weight", "attn_output.weight", TensorRole::plain},
    {"self_attn.q_norm.weight", "attn_q_norm.weight", TensorRole::norm},
    {"self_attn.k_norm.weight", "attn_k_norm.weight", TensorRole::norm},
    {"mlp.gate_proj.weight", "ffn_gate.weight", TensorRole::plain},
    {"mlp.up_proj.weight", "ffn_up.weight", TensorRole::plain},
    {"mlp.down_proj.weight", "ffn_down.weight", TensorRole::plain},
    {"self_attn.rotary_emb.inv_freq", "", TensorRole::skipped},
};

// Phi-3's fused projections: q|k|v rows in one matrix, gate|up rows in another.
constexpr Rule kFusedProjections[] = {
    {"self_attn.qkv_proj.weight", "attn_qkv.weight", TensorRole::plain},
    {"mlp.gate_up_proj.weight", "ffn_up.weight", TensorRole::plain},
};

// Where Llama puts its second norm (before the feed-forward) and Gemma its post-norms.
constexpr Rule kLlamaNorms[] = {
    {"post_attention_layernorm.weight", "ffn_norm.weight", TensorRole::norm},
};
constexpr Rule kGemmaNorms[] = {
    {"post_attention_layernorm.weight", "post_attention_norm.weight", TensorRole::norm},
    {"pre_feedforward_layernorm.weight", "ffn_norm.weight", TensorRole::norm},
    {"post_feedforward_layernorm.weight", "post_ffw_norm.weight", TensorRole::norm},
};

template <std::size_t N>
const Rule* find_rule(const Rule (&rules)[N], std::string_view name) {
  for (const Rule& rule : rules) {
    if (rule.hf == name) return &rule;
  }
  return nullptr;
}

}  // namespace

std::optional<MappedName> map_tensor_name(std::string_view hf_name, const HfArchitecture& arch) {
  if (const Rule* rule = find_rule(kGlobal, hf_name)) return MappedName{std::string(rule->gguf), rule->role};
  constexpr std::string_view kLayers = "model.layers.";
  if (hf_name.substr(0, kLayers.size()) != kLayers) return std::nullopt;
  std::string_view rest = hf_name.substr(kLayers.size());
  unsigned layer = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), layer);
  if (error != std::errc() || end == rest.data() || end == rest.data() + rest.size() || *end != '.' ||
      (rest[0] == '0' && end - rest.data() > 1)) {
    return std::nullopt;
  }
  rest = rest.substr(static_cast<std::size_t>(end - rest.data()) + 1);
  const Rule* rule = find_rule(kLayer, rest);
  if (rule == nullptr && arch.fused_projections) rule = find_rule(kFusedProjections, rest);
  if (rule == nullptr) rule = arch.gemma_norms ? find_rule(kGemmaNorms, rest) : find_rule(kLlamaNorms, rest);
  if (rule == nullptr) return std::nullopt;
  if (rule->role == TensorRole::skipped) return MappedName{"", TensorRole::skipped};
  return MappedName{"blk." + std::to_string(layer) + "." + std::string(rule->gguf), rule->role};
}

}  // namespace lpx::safetensors
