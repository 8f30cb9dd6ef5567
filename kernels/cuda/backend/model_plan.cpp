#include "model_plan.hpp"

#include <algorithm>
#include <string>
#include <vector>


#include "cuda/launch.hpp"
#include "device_matmul.hpp"

namespace lpx::cuda_backend {

namespace k = kernels::cuda;

DeviceMatmul::Limits matmul_limits(const DenseModel& d) {
  DeviceMatmul::Limits limits;
  limits.rows = static_cast<int>(std::max(d.max_rows, d.max_sequences));
  const std::int64_t q_width = std::int64_t{d.n_head} * d.head_dim;
  const std::int64_t kv_width = std::int64_t{d.n_head_kv} * d.head_dim;
  const std::int64_t n_ff = d.n_ff;
  limits.columns = std::max({std::int64_t{d.n_embd}, q_width, n_ff});
  // The widest weights: the output head, the stacked q/k/v and the interleaved gate/up.
  limits.weight_rows = std::max({std::int64_t{d.n_vocab}, q_width + 2 * kv_width, 2 * n_ff});
  // Products added to the residual stream (n_embd wide) or paired into SwiGLU (2 n_ff).
  limits.staged_rows = std::max(std::int64_t{d.n_embd}, 2 * n_ff);
  return limits;
}

MemoryPlan plan_memory(const DenseModel& d) {
  MemoryPlan plan;
  std::vector<const void*> seen;  // a tied head shares the embedding's bytes
  auto add = [&](const lpx_tensor_view* t) {
    if (t == nullptr || std::find(seen.begin(), seen.end(), t->data) != seen.end()) return;
    seen.push_back(t->data);
    plan.weights += static_cast<std::size_t>(t->size_bytes) + 256;
  };
  add(d.token_embd);
  add(d.output_norm);
  add(d.output);
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const DenseLayer& l = d.layers[i];
    for (const lpx_tensor_view* t : {l.attn_norm, l.wq, l.wk, l.wv, l.wo, l.ffn_norm, l.ffn_gate,
                                     l.ffn_up, l.ffn_down}) {
      add(t);
    }
    // The f32 vectors: q/k norms (head_dim each), post-norms (n_embd each), rope factors.
    const std::size_t vectors = (l.q_norm != nullptr ? d.head_dim : 0) +
                                (l.k_norm != nullptr ? d.head_dim : 0) +
                                (l.post_attention_norm != nullptr ? d.n_embd : 0) +
                                (l.post_ffn_norm != nullptr ? d.n_embd : 0) +
                                (l.rope.freq_factors != nullptr ? l.rope.n_rot / 2 : 0);
    plan.weights += vectors * sizeof(float) + 5 * 256;
  }
  const std::size_t kv_width = std::size_t{d.n_head_kv} * d.head_dim;
  plan.kv_cache = std::size_t{d.kv_blocks + 1} * d.kv_block_size * kv_width * 2 * sizeof(std::uint16_t) *
                  d.n_layer;
  const std::size_t rows = std::max(d.max_rows, d.max_sequences);
  const std::size_t q_width = std::size_t{d.n_head} * d.head_dim;
  // x and a block's output on its way to x; q and the attention output; k, v; SwiGLU and
  // (for gate/up not interleaved) up.
  const std::size_t per_row = 2 * d.n_embd + 2 * q_width + 2 * kv_width + 2 * d.n_ff;
  plan.workspace = rows * per_row * sizeof(float) +
                   std::size_t{d.max_sequences} * (d.n_embd + d.n_vocab) * sizeof(float) +
                   k::attention_partial_floats(
                       static_cast<int>(std::min<std::size_t>(rows, kAttentionRows)),
                       static_cast<int>(d.n_head), static_cast<int>(d.head_dim),
                       k::kMaxAttentionSplits) *
                       sizeof(float);  // the most splits any GPU gets
  plan.workspace += DeviceMatmul::planned_bytes(matmul_limits(d)) +
                    (std::size_t{64} << 20);  // inputs, cuBLAS's own state, graphs: headroom
  return plan;
}

}  // namespace lpx::cuda_backend
