#include "engine/llama_forward.hpp"

#include <algorithm>
#include <cmath>

namespace lpx::core {
namespace {

void add_bias(float* rows_data, const float* bias, std::uint32_t rows, std::uint32_t width) {
  if (bias == nullptr) return;
  for (std::uint32_t r = 0; r < rows; ++r) {
    float* row = rows_data + std::size_t{r} * width;
    for (std::uint32_t i = 0; i < width; ++i) row[i] += bias[i];
  }
}

void add_in_place(float* x, const float* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) x[i] += y[i];
}

}  // namespace

LlamaForward::LlamaForward(const Hyperparameters& h, const Architecture& architecture,
                           const LlamaWeights& weights, Backend& backend, KvCache& cache,
                           std::uint32_t max_rows, std::uint32_t max_context)
    : h_(h),
      w_(weights),
      backend_(backend),
      cache_(cache),
      attention_scale_(1.0f / std::sqrt(static_cast<float>(h.head_dim))),
      n_vocab_(h.n_vocab),
      max_rows_(max_rows),
      q_width_(h.n_head * h.head_dim),
      kv_width_(h.n_head_kv * h.head_dim),
      v_width_(h.n_head_kv * h.head_dim_v) {
  rope_.struct_size = sizeof(lpx_rope_params);
  rope_.mode = architecture.rope_mode;
  rope_.n_rot = h.n_rot;
  rope_.freq_base = static_cast<float>(h.rope_freq_base);
  rope_.freq_scale = h.rope_scaling == RopeScaling::linear
                         ? static_cast<float>(1.0 / h.rope_scaling_factor)
                         : 1.0f;
  rope_.freq_factors = w_.rope_freq_factors.empty() ? nullptr : w_.rope_freq_factors.data();

  const std::size_t rows = max_rows;
  x_.resize(rows * h.n_embd);
  norm_.resize(rows * h.n_embd);
  proj_.resize(rows * h.n_embd);
  q_.resize(rows * q_width_);
  attn_.resize(rows * std::size_t{h.n_head} * h.head_dim_v);
  k_.resize(rows * kv_width_);
  v_.resize(rows * v_width_);
  gate_.resize(rows * h.n_ff);
  up_.resize(rows * h.n_ff);

  lpx_backend_limits limits{};
  limits.struct_size = sizeof(lpx_backend_limits);
  limits.max_rows = max_rows;
  limits.max_columns = std::max({h.n_embd, h.n_ff, q_width_});
  limits.max_context = max_context;
  limits.max_heads = h.n_head;
  limits.head_dim = h.head_dim;
  backend_.reserve(limits);
}

void LlamaForward::run(const Batch& batch, float* logits) {
  const std::uint32_t rows = batch.rows();
  const std::uint32_t embd = h_.n_embd;
  for (std::uint32_t r = 0; r < rows; ++r) {
    backend_.dequantize_row(*w_.token_embd, batch.tokens[r], x_.data() + std::size_t{r} * embd);
  }
  for (std::uint32_t i = 0; i < w_.layers.size(); ++i) {
    attention_block(batch, w_.layers[i], i);
    feed_forward_block(rows, w_.layers[i]);
  }
  // The head runs only on the rows whose logits are wanted.
  const auto outputs = static_cast<std::uint32_t>(batch.output_rows.size());
  if (outputs == 0) return;
  for (std::uint32_t o = 0; o < outputs; ++o) {
    std::copy_n(x_.data() + std::size_t{batch.output_rows[o]} * embd, embd,
                proj_.data() + std::size_t{o} * embd);
  }
  backend_.rms_norm(proj_.data(), static_cast<const float*>(w_.output_norm->data), norm_.data(),
                    outputs, embd, static_cast<float>(h_.rms_norm_eps));
  backend_.matmul(*w_.output, norm_.data(), logits, outputs);
}

void LlamaForward::attention_block(const Batch& batch, const LlamaLayerWeights& layer,
                                   std::uint32_t index) {
  const std::uint32_t rows = batch.rows();
  const std::uint32_t embd = h_.n_embd;
  backend_.rms_norm(x_.data(), static_cast<const float*>(layer.attn_norm->data), norm_.data(),
                    rows, embd, static_cast<float>(h_.rms_norm_eps));
  backend_.matmul(*layer.wq, norm_.data(), q_.data(), rows);
  backend_.matmul(*layer.wk, norm_.data(), k_.data(), rows);
  backend_.matmul(*layer.wv, norm_.data(), v_.data(), rows);
  add_bias(q_.data(), layer.bq, rows, q_width_);
  add_bias(k_.data(), layer.bk, rows, kv_width_);
  add_bias(v_.data(), layer.bv, rows, v_width_);
  backend_.rope(q_.data(), rows, h_.n_head, h_.head_dim, batch.positions.data(), rope_);
  backend_.rope(k_.data(), rows, h_.n_head_kv, h_.head_dim, batch.positions.data(), rope_);

  for (const BatchSequence& sequence : batch.sequences) {
    for (std::uint32_t r = sequence.first_row; r < sequence.first_row + sequence.n_rows; ++r) {
      cache_.store(index, *sequence.blocks, static_cast<std::uint32_t>(batch.positions[r]),
                   k_.data() + std::size_t{r} * kv_width_, v_.data() + std::size_t{r} * v_width_);
    }
    lpx_attention_args args{};
    args.struct_size = sizeof(lpx_attention_args);
    args.q = q_.data() + std::size_t{sequence.first_row} * q_width_;
    args.out = attn_.data() + std::size_t{sequence.first_row} * h_.n_head * h_.head_dim_v;
    args.positions = batch.positions.data() + sequence.first_row;
    args.n_rows = sequence.n_rows;
    args.n_heads = h_.n_head;
    args.n_kv_heads = h_.n_head_kv;
    args.head_dim = h_.head_dim;
    args.scale = attention_scale_;
    args.k_cache = cache_.k_pool(index);
    args.v_cache = cache_.v_pool(index);
    args.block_table = sequence.blocks->data();
    args.block_size = cache_.shape().block_size;
    backend_.attention(args);
  }
  backend_.matmul(*layer.wo, attn_.data(), proj_.data(), rows);
  add_in_place(x_.data(), proj_.data(), std::size_t{rows} * embd);
}

void LlamaForward::feed_forward_block(std::uint32_t rows, const LlamaLayerWeights& layer) {
  const std::uint32_t embd = h_.n_embd;
  backend_.rms_norm(x_.data(), static_cast<const float*>(layer.ffn_norm->data), norm_.data(),
                    rows, embd, static_cast<float>(h_.rms_norm_eps));
  backend_.matmul(*layer.ffn_gate, norm_.data(), gate_.data(), rows);
  backend_.matmul(*layer.ffn_up, norm_.data(), up_.data(), rows);
  // Row by row: the kernels' arithmetic treats a call's last n % 8 elements differently.
  for (std::uint32_t r = 0; r < rows; ++r) {
    float* gate = gate_.data() + std::size_t{r} * h_.n_ff;
    backend_.swiglu(gate, up_.data() + std::size_t{r} * h_.n_ff, gate, h_.n_ff);
  }
  backend_.matmul(*layer.ffn_down, gate_.data(), proj_.data(), rows);
  add_in_place(x_.data(), proj_.data(), std::size_t{rows} * embd);
}

}  // namespace lpx::core
