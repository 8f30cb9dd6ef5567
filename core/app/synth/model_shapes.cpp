#include "synth/model_shapes.hpp"

namespace lpx::core::synth {

std::uint64_t ModelShape::parameters() const noexcept {
  const std::uint64_t hd = head_dim();
  const std::uint64_t attention = std::uint64_t{n_embd} * hd * (n_head * 2 + n_head_kv * 2);
  const std::uint64_t ffn = std::uint64_t{n_embd} * n_ff * 3;
  const std::uint64_t bias = attention_bias ? hd * (n_head + 2 * n_head_kv) : 0;
  return std::uint64_t{n_vocab} * n_embd + n_layer * (attention + ffn + bias + 2 * n_embd) + n_embd;
}

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
