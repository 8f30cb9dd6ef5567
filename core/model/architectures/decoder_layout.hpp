// What the pre-norm decoder architectures share: how their GGUF files name and arrange the
// tensors (embedding, final norm, optional output head, and per layer the attention and gated
// feed-forward weights, with the variations one family or another adds), and the description
// those tensors make with one rope for every layer. An architecture's file (architectures/
// llama.cpp, gemma3.cpp, ...) picks its layout, then sets what it does differently: windows, per-layer
// rope, scales, soft caps, activation.
#pragma once

#include <cstdint>
#include <vector>

#include "model/architecture.hpp"

namespace lpx::core {

struct DecoderLayout {
  const char* name = nullptr;        // the architecture's (static) name
  std::int32_t rope_mode = 0;        // an lpx_rope_mode
  bool qkv_bias = false;             // attn_{q,k,v}.bias (Qwen2)
  bool qk_norm = false;              // attn_q_norm, attn_k_norm: per-head RMS norms (Qwen3, Gemma 3)
  bool post_norms = false;           // post_attention_norm, post_ffw_norm (Gemma 2/3)
  bool fused_qkv = false;            // one attn_qkv: rows q | k | v (Phi-3)
  bool fused_gate_up = false;        // ffn_up holds gate | up, 2 n_ff rows; no ffn_gate (Phi-3)
  bool output_is_embedding = false;  // the head is always token_embd; output.weight unused (Gemma 2)
  bool rope_freqs = true;            // rope_freqs.weight or llama3 scaling may give rope factors
};

// Every tensor a model of `layout` may have, with its shape.
void add_decoder_tensors(const Hyperparameters& h, const DecoderLayout& layout,
                         std::vector<ExpectedTensor>& out);
std::vector<ExpectedTensor> decoder_tensors(const Hyperparameters& h, const DecoderLayout& layout);

// The description of `file` as `layout` reads it: every layer's tensors, and one rope for every
// layer (rope.freq_base, linear scaling, Llama 3 factors where the layout has them). Not yet
// finished: the caller sets what its architecture does differently, then calls
// finish_decoder. Errors name the file and the tensor.
Expected<TransformerModel> describe_decoder(const ModelFile& file, const Hyperparameters& h,
                                            const DecoderLayout& layout);

// TransformerModel::finish, its errors prefixed with the file.
Expected<TransformerModel> finish_decoder(const ModelFile& file, TransformerModel model);

// describe_decoder then finish_decoder: an architecture that is its layout and nothing more.
Expected<TransformerModel> describe_plain_decoder(const ModelFile& file, const Hyperparameters& h,
                                                  const DecoderLayout& layout);

}  // namespace lpx::core
