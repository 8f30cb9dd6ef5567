#include "formats/tiny_llama.hpp"

namespace lpx::test {

GgufBuilder TinyLlama::builder() const {
  GgufBuilder b;
  const std::string p = architecture + ".";
  auto u32 = [&](const std::string& key, std::uint32_t value) {
    if (skip_metadata.count(key) != 0) return;
    auto it = metadata_u32.find(key);
    b.u32(key, it == metadata_u32.end() ? value : it->second);
  };
  b.string("general.architecture", architecture);
  u32(p + "block_count", n_layer);
  u32(p + "embedding_length", n_embd);
  u32(p + "feed_forward_length", n_ff);
  u32(p + "attention.head_count", n_head);
  u32(p + "attention.head_count_kv", n_head_kv);
  u32(p + "context_length", 256);
  u32(p + "rope.dimension_count", n_rot);
  if (skip_metadata.count(p + "attention.layer_norm_rms_epsilon") == 0) {
    b.f32(p + "attention.layer_norm_rms_epsilon", 1e-5f);
  }
  b.string("tokenizer.ggml.model", "llama");
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
  const std::uint32_t n_tokens = tokenizer_tokens ? tokenizer_tokens : n_vocab;
  for (std::uint32_t t = 0; t < n_tokens; ++t) {
    tokens.push_back(t < 3 ? std::string(t == 0 ? "<unk>" : t == 1 ? "<s>" : "</s>")
                           : "\xe2\x96\x81tok" + std::to_string(t));
    scores.push_back(-static_cast<float>(t));
    types.push_back(t == 0 ? 2 : t < 3 ? 3 : 1);
  }
  b.strings("tokenizer.ggml.tokens", tokens).f32s("tokenizer.ggml.scores", scores);
  b.i32s("tokenizer.ggml.token_type", types);
  b.u32("tokenizer.ggml.bos_token_id", 1).u32("tokenizer.ggml.eos_token_id", 2);

  const std::uint64_t head_dim = n_embd / n_head;
  auto add = [&](const std::string& name, std::vector<std::uint64_t> dims, std::uint32_t type) {
    if (skip_tensors.count(name) == 0) b.tensor(name, type, std::move(dims));
  };
  add("token_embd.weight", {n_embd, n_vocab}, weight_type);
  add("output_norm.weight", {n_embd}, norm_type);
  if (!tied_output) add("output.weight", {n_embd, n_vocab}, weight_type);
  for (std::uint32_t l = 0; l < n_layer; ++l) {
    const std::string k = "blk." + std::to_string(l) + ".";
    add(k + "attn_norm.weight", {n_embd}, kGgmlF32);
    add(k + "attn_q.weight", {n_embd, n_head * head_dim}, weight_type);
    add(k + "attn_k.weight", {n_embd, n_head_kv * head_dim}, weight_type);
    add(k + "attn_v.weight", {n_embd, n_head_kv * head_dim}, weight_type);
    add(k + "attn_output.weight", {n_head * head_dim, n_embd}, weight_type);
    add(k + "ffn_norm.weight", {n_embd}, kGgmlF32);
    add(k + "ffn_gate.weight", {n_embd, n_ff}, weight_type);
    const bool bad = l == 0 && !ffn_up_shape_override.empty();
    add(k + "ffn_up.weight", {n_embd, bad ? n_ff + 32 : n_ff}, weight_type);
    add(k + "ffn_down.weight", {n_ff, n_embd}, weight_type);
    if (architecture == "qwen2") {
      add(k + "attn_q.bias", {n_head * head_dim}, kGgmlF32);
      add(k + "attn_k.bias", {n_head_kv * head_dim}, kGgmlF32);
      add(k + "attn_v.bias", {n_head_kv * head_dim}, kGgmlF32);
    }
  }
  if (!extra_tensor.empty()) add(extra_tensor, {n_embd}, kGgmlF32);
  return b;
}

}  // namespace lpx::test
