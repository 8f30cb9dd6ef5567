#include "synth/model_shapes.hpp"

namespace lpx::core::synth {

std::uint64_t ModelShape::parameters() const noexcept {
  const std::uint64_t hd = head_dim();
  const std::uint64_t attention = std::uint64_t{n_embd} * hd * (n_head * 2 + n_head_kv * 2);
  const std::uint64_t ffn = std::uint64_t{n_embd} * n_ff * 3;
  const std::uint64_t bias = attention_bias ? hd * (n_head + 2 * n_head_kv) : 0;
  const std::uint64_t norms = n_embd * (family.post_norms ? 4 : 2) + (family.qk_norm ? 2 * hd : 0);
  const std::uint64_t head = family.separate_output ? std::uint64_t{n_vocab} * n_embd : 0;
  return std::uint64_t{n_vocab} * n_embd + head + n_layer * (attention + ffn + bias + norms) + n_embd;
}

namespace {

ModelShape with(ModelShape shape, const FamilyTraits& family) {
  shape.family = family;
  return shape;
}

}  // namespace

const std::vector<ModelShape>& model_shapes() {
  using V = VocabularyStyle;
  static const std::vector<ModelShape> shapes = {
      // name            arch     embd  layers heads kv  ff     vocab   ctx     rope     eps    bias   l3    pre
      {"smollm2-135m", "llama", 576, 30, 9, 3, 1536, 49152, 8192, 100000, 1e-5f, false, false, "smollm", V::kChatMl},
      {"smollm2-360m", "llama", 960, 32, 15, 5, 2560, 49152, 8192, 100000, 1e-5f, false, false, "smollm", V::kChatMl},
      {"smollm2-1.7b", "llama", 2048, 24, 32, 32, 8192, 49152, 8192, 130000, 1e-5f, false, false, "smollm", V::kChatMl},
      {"qwen2.5-0.5b", "qwen2", 896, 24, 14, 2, 4864, 151936, 32768, 1000000, 1e-6f, true, false, "qwen2", V::kChatMl},
      {"qwen2.5-1.5b", "qwen2", 1536, 28, 12, 2, 8960, 151936, 32768, 1000000, 1e-6f, true, false, "qwen2", V::kChatMl},
      {"llama-3.2-1b", "llama", 2048, 16, 32, 8, 8192, 128256, 131072, 500000, 1e-5f, false, true, "llama-bpe", V::kLlama3},
      {"llama-3.2-3b", "llama", 3072, 28, 24, 8, 8192, 128256, 131072, 500000, 1e-5f, false, true, "llama-bpe", V::kLlama3},
      // The families of issue 19, from their published config.json files.
      with({"gemma3-270m", "gemma3", 640, 18, 4, 1, 2048, 262144, 32768, 1000000, 1e-6f, false, false, "default", V::kChatMl},
           {.head_dim = 256, .qk_norm = true, .post_norms = true, .sliding_window = 512, .rope_base_local = 10000}),
      with({"gemma3-1b", "gemma3", 1152, 26, 4, 1, 6912, 262144, 32768, 1000000, 1e-6f, false, false, "default", V::kChatMl},
           {.head_dim = 256, .qk_norm = true, .post_norms = true, .sliding_window = 512, .rope_base_local = 10000}),
      with({"gemma2-2b", "gemma2", 2304, 26, 8, 4, 9216, 256000, 8192, 10000, 1e-6f, false, false, "default", V::kChatMl},
           {.head_dim = 256, .post_norms = true, .sliding_window = 4096, .attention_softcap = 50, .final_softcap = 30}),
      with({"qwen3-0.6b", "qwen3", 1024, 28, 16, 8, 3072, 151936, 40960, 1000000, 1e-6f, false, false, "qwen2", V::kChatMl},
           {.head_dim = 128, .qk_norm = true}),
      with({"qwen3-1.7b", "qwen3", 2048, 28, 16, 8, 6144, 151936, 40960, 1000000, 1e-6f, false, false, "qwen2", V::kChatMl},
           {.head_dim = 128, .qk_norm = true}),
      with({"phi3-mini", "phi3", 3072, 32, 32, 32, 8192, 32064, 131072, 10000, 1e-5f, false, false, "default", V::kPhi3},
           {.fused = true, .separate_output = true, .longrope_original = 4096}),
      with({"smollm3-3b", "smollm3", 2048, 36, 16, 4, 11008, 128256, 65536, 5000000, 1e-6f, false, false, "llama-bpe", V::kLlama3},
           {}),
      with({"granite-3.3-2b", "granite", 2048, 40, 32, 8, 8192, 49159, 131072, 10000000, 1e-5f, false, false, "refact", V::kChatMl},
           {.embedding_scale = 12.0f, .residual_scale = 0.22f, .attention_scale = 0.015625f, .logit_scale = 8.0f}),
  };
  return shapes;
}

const ModelShape* find_model_shape(const std::string& name) {
  for (const ModelShape& s : model_shapes()) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

std::string model_shape_names() {
  std::string out;
  for (const ModelShape& s : model_shapes()) out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

}  // namespace lpx::core::synth
