// The architectures and shapes of real models, by name, for synthetic models (`lpx-pipeline
// synth`, `bench --model synth:NAME:TYPE`): same tensors, same sizes, random weights. Values are
// those of the models' published configurations.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lpx::core::synth {

enum class VocabularyStyle { kChatMl, kLlama3, kPhi3 };

// What a family adds to the llama layout (all off for llama and qwen2), as the model file says.
struct FamilyTraits {
  std::uint32_t head_dim = 0;        // attention.key_length when not n_embd / n_head
  bool qk_norm = false;              // attn_q_norm, attn_k_norm (qwen3, gemma3)
  bool post_norms = false;           // post_attention_norm, post_ffw_norm (gemma)
  std::uint32_t sliding_window = 0;  // attention.sliding_window (gemma)
  float rope_base_local = 0;         // rope.freq_base_swa (gemma3; 0: not written)
  float attention_softcap = 0;       // attn_logit_softcapping (gemma2)
  float final_softcap = 0;           // final_logit_softcapping (gemma2)
  bool fused = false;                // attn_qkv and ffn_up = gate | up (phi3)
  bool separate_output = false;      // output.weight of its own (phi3); else tied
  std::uint32_t longrope_original = 0;  // phi3: rope_factors_long/short, original context
  float embedding_scale = 0, residual_scale = 0, attention_scale = 0, logit_scale = 0;  // granite
};

struct ModelShape {
  const char* name;          // e.g. "smollm2-135m"
  const char* architecture;  // general.architecture
  std::uint32_t n_embd, n_layer, n_head, n_head_kv, n_ff, n_vocab, n_ctx;
  float rope_base;
  float rms_eps;
  bool attention_bias;       // qwen2: q/k/v biases
  bool llama3_rope;          // rope_freqs from Llama 3's scaling (factor 32, 8192 original)
  const char* pre_tokenizer; // tokenizer.ggml.pre
  VocabularyStyle vocabulary;
  FamilyTraits family = {};

  std::uint32_t head_dim() const noexcept {
    return family.head_dim != 0 ? family.head_dim : n_embd / n_head;
  }
  // Weights (elements), the embedding counted once when tied to the output.
  std::uint64_t parameters() const noexcept;
};

const std::vector<ModelShape>& model_shapes();
const ModelShape* find_model_shape(const std::string& name);  // nullptr if unknown
std::string model_shape_names();                               // "smollm2-135m, …"

}  // namespace lpx::core::synth
