// The forward pass of any model the transformer description can state (lpx/kinds/transformer.h)
// on a backend's per-op kernels over host buffers (cpu, cpu-scalar): token embedding, the
// layers as the description's step spells out (biases, q/k norms, rope or none, windowed and
// soft-capped attention, post-norms, residual scale, SwiGLU or GeGLU, fused or split
// projections), then the output head on the batch's output rows. The backend computes every
// kernel; this class owns only the activation buffers, sized once for the largest batch, and
// does the additions and scalings between kernels. Rows of requests that run with a resident
// LoRA adapter get s * B (A x) added to each adapted weight's product (model/resident_adapter.hpp).
//
// Threading: one engine thread. run() does not allocate.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/backend.hpp"
#include "engine/batch.hpp"
#include "engine/forward_pass.hpp"
#include "engine/kv_cache.hpp"
#include "model/resident_adapter.hpp"
#include "model/transformer_model.hpp"

namespace lpx::core {

class TransformerForward final : public ForwardPass {
 public:
  // `max_rows`: the most rows a batch may have; `max_context`: the most positions a sequence
  // may have. Reserves the backend for those limits. `adapters`: those a batch's sequences may
  // name (BatchSequence::adapter). `model` and the adapters must outlive this.
  TransformerForward(const TransformerModel& model, Backend& backend, KvCache& cache,
                     std::uint32_t max_rows, std::uint32_t max_context,
                     const std::vector<std::unique_ptr<ResidentAdapter>>& adapters = {});

  std::uint32_t n_vocab() const noexcept override { return d_.n_vocab; }
  std::uint32_t max_rows() const noexcept { return max_rows_; }

  void run(const Batch& batch, float* logits) override;

 private:
  void attention_block(const Batch& batch, const lpx_transformer_layer& layer,
                       std::uint32_t index);
  void project_qkv(const Batch& batch, const lpx_transformer_layer& layer);
  void feed_forward_block(const Batch& batch, const lpx_transformer_layer& layer);
  // y = weight x for every row of the batch, plus each row's adapter's share.
  void project(const lpx_tensor_view& weight, const float* x, float* y, const Batch& batch);
  // y[row] += s * B (A x[row]) for rows [first, first + n) when `adapter` adapts `weight`.
  void add_adapter(const ResidentAdapter* adapter, const lpx_tensor_view& weight, const float* x, float* y,
                   std::uint32_t first, std::uint32_t n);
  // The output head's share: its rows are the batch's output rows, packed.
  void add_head_adapters(const Batch& batch, const float* x, float* logits);
  // x += residual_scale * proj (post-normed first when `post_norm` is set).
  void add_residual(std::uint32_t rows, const lpx_tensor_view* post_norm);

  const lpx_transformer_desc& d_;
  bool scales_queries_;  // TransformerModel::scales_queries
  Backend& backend_;
  KvCache& cache_;
  std::uint32_t max_rows_;
  std::uint32_t q_width_, kv_width_;

  std::vector<float> x_;      // residual stream, rows x n_embd
  std::vector<float> norm_;   // normalised input of a block, rows x n_embd
  std::vector<float> q_, k_, v_, attn_;  // rows x (heads x head_dim)
  std::vector<float> qkv_;               // fused projections: rows x (q + k + v widths)
  std::vector<float> gate_, up_;         // rows x n_ff (fused: gate_ holds rows x 2 n_ff)
  std::vector<float> proj_;              // rows x n_embd: a block's output before the residual
  std::vector<float> lora_mid_, lora_out_;  // adapters: rows x rank (A x), rows x width (B A x)
};

}  // namespace lpx::core
