// What Gemma 2 and Gemma 3 share beyond the decoder layout: embeddings scaled by sqrt(n_embd),
// GeGLU, norms before and after attention and feed-forward (their weights stored as the final
// multipliers: the converter bakes Gemma's "1 + w" in), sliding-window (local) layers
// interleaved with global ones, each kind with its own rope base, and the 27B models' query
// scale.
#pragma once

#include <cstdint>

#include "model/architectures/decoder_layout.hpp"

namespace lpx::core {

struct GemmaVariant {
  DecoderLayout layout;
  // {arch}.attention.sliding_window when absent (0: no local layers) and
  // {arch}.attention.sliding_window_pattern when absent: layer l is local unless
  // l % pattern == pattern - 1.
  std::uint32_t default_window = 0;
  std::uint32_t default_pattern = 0;
  // Gemma 2's local layers rotate exactly as its global ones (base and scaling); Gemma 3's with
  // {arch}.rope.freq_base_swa (default 10000) and no scaling.
  bool local_rope_is_global = false;
  bool attention_softcap = false;        // reads {arch}.attn_logit_softcapping (Gemma 2 only)
  double default_attention_softcap = 0;  // ... and this when it is absent
  double default_final_softcap = 0;      // {arch}.final_logit_softcapping when absent
  // The block count of the variant's 27B model, whose queries are scaled by
  // 1/sqrt(n_embd / n_head) instead of 1/sqrt(head_dim) (its query_pre_attn_scalar; the file
  // has no key for it).
  std::uint32_t n_layer_27b = 0;
};

Expected<TransformerModel> describe_gemma(const ModelFile& file, const Hyperparameters& h,
                                          const GemmaVariant& variant);

}  // namespace lpx::core
