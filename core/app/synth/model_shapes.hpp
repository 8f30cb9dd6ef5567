// The architectures and shapes of real models, by name, for synthetic models (`lpx-pipeline
// synth`, `bench --model synth:NAME:TYPE`): same tensors, same sizes, random weights. Values are
// those of the models' published configurations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lpx::core::synth {

enum class VocabularyStyle { kChatMl, kLlama3 };

struct ModelShape {
  const char* name;          // e.g. "smollm2-135m"
  const char* architecture;  // "llama" or "qwen2"
  std::uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  float rope_base;
  float rms_eps;
  bool attention_bias;       // qwen2: q/k/v biases
  bool llama3_rope;          // rope_freqs from Llama 3's scaling (factor 32, 8192 original)
  const char* pre_tokenizer; // tokenizer.ggml.pre
  VocabularyStyle vocabulary;

  std::uint32_t head_dim() const noexcept { return n_embd / n_head; }
  // Weights (elements), embeddings tied to the output as in all of these models.
  std::uint64_t parameters() const noexcept;
};

const std::vector<ModelShape>& model_shapes();
const ModelShape* find_model_shape(const std::string& name);  // nullptr if unknown
std::string model_shape_names();                               // "smollm2-135m, …"

}  // namespace lpx::core::synth
