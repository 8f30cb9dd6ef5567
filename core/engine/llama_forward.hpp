// The forward pass of the llama family (llama, qwen2): token embedding, then per layer
//   x += Wo . attention(rope(Wq.norm(x) + bq), rope(Wk.norm(x) + bk), Wv.norm(x) + bv)
//   x += Wdown . (silu(Wgate.norm(x)) * Wup.norm(x))
// and the output head on the final norm, for every row of a Batch at once. Every kernel is a
// backend call; this class owns only the activation buffers, sized once for the largest batch.
//
// Threading: one engine thread. run() does not allocate.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/backend.hpp"
#include "engine/batch.hpp"
#include "engine/forward_pass.hpp"
#include "engine/kv_cache.hpp"
#include "engine/llama_weights.hpp"
#include "model/architecture.hpp"
#include "model/hyperparameters.hpp"

namespace lpx::core {

class LlamaForward final : public ForwardPass {
 public:
  // `max_rows`: the most rows a batch may have; `max_context`: the most positions a sequence
  // may have. Reserves the backend for those limits.
  LlamaForward(const Hyperparameters& h, const Architecture& architecture,
               const LlamaWeights& weights, Backend& backend, KvCache& cache,
               std::uint32_t max_rows, std::uint32_t max_context);

  std::uint32_t n_vocab() const noexcept override { return n_vocab_; }
  std::uint32_t max_rows() const noexcept { return max_rows_; }

  void run(const Batch& batch, float* logits) override;

 private:
  void attention_block(const Batch& batch, const LlamaLayerWeights& layer, std::uint32_t index);
  void feed_forward_block(std::uint32_t rows, const LlamaLayerWeights& layer);

  const Hyperparameters& h_;
  const LlamaWeights& w_;
  Backend& backend_;
  KvCache& cache_;
  lpx_rope_params rope_{};
  float attention_scale_;
  std::uint32_t n_vocab_;
  std::uint32_t max_rows_;
  std::uint32_t q_width_, kv_width_, v_width_;

  std::vector<float> x_;      // residual stream, rows x n_embd
  std::vector<float> norm_;   // normalised input of a block, rows x n_embd
  std::vector<float> q_, k_, v_, attn_;  // rows x (heads x head_dim)
  std::vector<float> gate_, up_;         // rows x n_ff
  std::vector<float> proj_;              // rows x n_embd: a block's output before the residual
};

}  // namespace lpx::core
