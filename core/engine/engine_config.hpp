// How an engine is sized: context, batch and KV-cache limits ([model] in a pipeline).
#pragma once

#include <cstdint>

namespace lpx::core {

// [speculative]'s defaults, shared by the pipeline table and the command-line shorthands.
// Measured on copy work (docs/perf/speculative.md): four-token matches confirm nearly every
// draft, so eight per step pay; a draft model stops where it is unsure, as llama.cpp's did.
inline constexpr std::uint32_t kDefaultMaxDraft = 8;
inline constexpr std::uint32_t kDefaultNgram = 4;
inline constexpr double kDefaultDraftPMin = 0.75;

struct EngineConfig {
  std::uint32_t context_size = 0;     // positions per sequence; 0 = min(trained, 8192)
  std::uint32_t max_sequences = 4;    // requests decoded together
  std::uint32_t kv_cache_tokens = 0;  // positions in the shared pool; 0 = context_size
  std::uint32_t batch_tokens = 512;   // rows per step: prefill chunks + decode tokens
  // Prompt tokens per step while any sequence is decoding ([model] mode: "latency" = 64, so a
  // long prompt does not stall running streams; "throughput" = batch_tokens).
  std::uint32_t prefill_tokens_while_decoding = 64;
  std::uint32_t block_size = 16;      // positions per KV block
  // Automatic prefix caching: full blocks of computed tokens are indexed by their prefix, and a
  // new request maps the longest cached run of its prompt instead of computing it ([engine]
  // prefix_cache; docs/engine.md).
  bool prefix_cache = true;
  // Device models whose backend queues steps (ABI 2.8): while every running sequence decodes
  // with its token picked on the device, step N + 1 is queued before step N's tokens are read,
  // its tokens taken from N's picks on the device, so the device never waits for the host
  // ([engine] overlap_steps; docs/engine.md). A sequence that ends at step N loses its row of
  // N + 1, computed in vain.
  bool overlap_steps = true;
  // Speculative decoding ([speculative]): each decoding sequence drafts up to max_draft tokens
  // that the step verifies with the model beside its next token; 0: off. Drafts come from the
  // sequence's own text (mode "ngram", ngram_draft.hpp), or from a draft model when the engine
  // has one (mode "draft", draft_model.hpp).
  std::uint32_t max_draft = 0;
  std::uint32_t ngram = kDefaultNgram;  // tokens matched to find a draft
  // A draft model's guesses stop at a token it gives a probability below this (0: never).
  float draft_p_min = static_cast<float>(kDefaultDraftPMin);
  // Set by the engine from the model, not by users: when every layer attends only to its last
  // kv_window positions, the blocks a sequence's next rows can no longer reach go back to the
  // pool as it advances (TransformerModel::kv_window). 0: every position stays cached.
  std::uint32_t kv_window = 0;
};

}  // namespace lpx::core
