#include "engine/transformer_forward.hpp"

#include <algorithm>
#include <cmath>

namespace lpx::core {
namespace {

const float* floats(const lpx_tensor_view* view) {
  return view != nullptr ? static_cast<const float*>(view->data) : nullptr;
}

void add_bias(float* rows_data, const lpx_tensor_view* bias, std::uint32_t rows,
              std::uint32_t width) {
  if (bias == nullptr) return;
  const float* b = floats(bias);
  for (std::uint32_t r = 0; r < rows; ++r) {
    float* row = rows_data + std::size_t{r} * width;
    for (std::uint32_t i = 0; i < width; ++i) row[i] += b[i];
  }
}

void scale_in_place(float* x, std::size_t n, float scale) {
  scale = scale_or_one(scale);
  if (scale == 1.0f) return;
  for (std::size_t i = 0; i < n; ++i) x[i] *= scale;
}

// The columns [first, first + width) of every row of a rows x stride matrix, packed.
void copy_columns(const float* from, std::size_t stride, std::size_t first, std::size_t width,
                  std::uint32_t rows, float* to) {
  for (std::uint32_t r = 0; r < rows; ++r) {
    std::copy_n(from + r * stride + first, width, to + std::size_t{r} * width);
  }
}

bool any_layer(const lpx_transformer_desc& d, bool (*has)(const lpx_transformer_layer&)) {
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    if (has(*lpx_transformer_layer_at(&d, i))) return true;
  }
  return false;
}

}  // namespace

TransformerForward::TransformerForward(const TransformerModel& model, Backend& backend,
                                       KvCache& cache, std::uint32_t max_rows,
                                       std::uint32_t max_context,
                                       const std::vector<std::unique_ptr<ResidentAdapter>>& adapters)
    : d_(model.desc()),
      scales_queries_(model.scales_queries()),
      backend_(backend),
      cache_(cache),
      max_rows_(max_rows),
      q_width_(d_.n_head * d_.head_dim),
      kv_width_(d_.n_head_kv * d_.head_dim) {
  const std::size_t rows = max_rows;
  x_.resize(rows * d_.n_embd);
  norm_.resize(rows * d_.n_embd);
  proj_.resize(rows * d_.n_embd);
  q_.resize(rows * q_width_);
  attn_.resize(rows * q_width_);
  k_.resize(rows * kv_width_);
  v_.resize(rows * kv_width_);
  if (any_layer(d_, [](const lpx_transformer_layer& l) { return l.wqkv != nullptr; })) {
    qkv_.resize(rows * (q_width_ + 2 * kv_width_));
  }
  const bool fused_ffn =
      any_layer(d_, [](const lpx_transformer_layer& l) { return l.ffn_gate_up != nullptr; });
  gate_.resize(rows * d_.n_ff * (fused_ffn ? 2 : 1));
  up_.resize(rows * d_.n_ff);
  std::size_t rank = 0, width = 0;
  for (const auto& adapter : adapters) {
    for (const LoraPair& p : adapter->pairs()) {
      rank = std::max<std::size_t>(rank, p.rank);
      width = std::max<std::size_t>(width, static_cast<std::size_t>(p.b->dims[1]));
    }
  }
  lora_mid_.resize(rows * rank);
  lora_out_.resize(rows * width);

  lpx_backend_limits limits{};
  limits.struct_size = sizeof(lpx_backend_limits);
  limits.max_rows = max_rows;
  limits.max_columns = std::max({d_.n_embd, d_.n_ff, q_width_});
  limits.max_context = max_context;
  limits.max_heads = d_.n_head;
  limits.head_dim = d_.head_dim;
  backend_.reserve(limits);
}

void TransformerForward::run(const Batch& batch, float* logits) {
  const std::uint32_t rows = batch.rows();
  const std::uint32_t embd = d_.n_embd;
  for (std::uint32_t r = 0; r < rows; ++r) {
    backend_.dequantize_row(*d_.token_embd, batch.tokens[r], x_.data() + std::size_t{r} * embd);
  }
  scale_in_place(x_.data(), std::size_t{rows} * embd, d_.embedding_scale);
  for (std::uint32_t i = 0; i < d_.n_layer; ++i) {
    const lpx_transformer_layer& layer = *lpx_transformer_layer_at(&d_, i);
    attention_block(batch, layer, i);
    feed_forward_block(batch, layer);
  }
  // The head runs only on the rows whose logits are wanted.
  const auto outputs = static_cast<std::uint32_t>(batch.output_rows.size());
  if (outputs == 0) return;
  for (std::uint32_t o = 0; o < outputs; ++o) {
    std::copy_n(x_.data() + std::size_t{batch.output_rows[o]} * embd, embd,
                proj_.data() + std::size_t{o} * embd);
  }
  backend_.rms_norm(proj_.data(), floats(d_.output_norm), norm_.data(), outputs, embd,
                    d_.norm_eps);
  backend_.matmul(*d_.output, norm_.data(), logits, outputs);
  if (!lora_mid_.empty()) add_head_adapters(batch, norm_.data(), logits);
  const std::size_t n_logits = std::size_t{outputs} * d_.n_vocab;
  scale_in_place(logits, n_logits, d_.logit_scale);
  if (d_.final_softcap > 0.0f) {
    const float cap = d_.final_softcap, inverse = 1.0f / d_.final_softcap;
    for (std::size_t i = 0; i < n_logits; ++i) logits[i] = cap * std::tanh(logits[i] * inverse);
  }
}

void TransformerForward::project(const lpx_tensor_view& weight, const float* x, float* y, const Batch& batch) {
  backend_.matmul(weight, x, y, batch.rows());
  if (lora_mid_.empty()) return;
  // Runs of consecutive rows that share an adapter, each in one product.
  const auto& sequences = batch.sequences;
  for (std::size_t s = 0; s < sequences.size();) {
    std::size_t end = s + 1;
    std::uint32_t n = sequences[s].n_rows;
    while (end < sequences.size() && sequences[end].adapter == sequences[s].adapter) n += sequences[end++].n_rows;
    if (sequences[s].adapter != nullptr) add_adapter(sequences[s].adapter, weight, x, y, sequences[s].first_row, n);
    s = end;
  }
}

void TransformerForward::add_adapter(const ResidentAdapter* adapter, const lpx_tensor_view& weight, const float* x,
                                     float* y, std::uint32_t first, std::uint32_t n) {
  const LoraPair* pair = adapter->find(weight.name);
  if (pair == nullptr) return;
  const auto in = static_cast<std::size_t>(weight.dims[0]);
  const auto out = static_cast<std::size_t>(weight.dims[1]);
  backend_.matmul(*pair->a, x + first * in, lora_mid_.data(), n);
  backend_.matmul(*pair->b, lora_mid_.data(), lora_out_.data(), n);
  float* rows = y + first * out;
  const float s = pair->scale;
  for (std::size_t i = 0, count = std::size_t{n} * out; i < count; ++i) rows[i] += s * lora_out_[i];
}

void TransformerForward::add_head_adapters(const Batch& batch, const float* x, float* logits) {
  // Output row o is batch row output_rows[o]; both lists ascend, so one walk pairs them.
  std::size_t s = 0;
  const auto outputs = static_cast<std::uint32_t>(batch.output_rows.size());
  for (std::uint32_t o = 0; o < outputs;) {
    const auto adapter_of = [&](std::uint32_t row) {
      while (batch.sequences[s].first_row + batch.sequences[s].n_rows <= row) ++s;
      return batch.sequences[s].adapter;
    };
    const ResidentAdapter* adapter = adapter_of(batch.output_rows[o]);
    std::uint32_t end = o + 1;
    while (end < outputs && adapter_of(batch.output_rows[end]) == adapter) ++end;
    if (adapter != nullptr) add_adapter(adapter, *d_.output, x, logits, o, end - o);
    o = end;
  }
}

void TransformerForward::project_qkv(const Batch& batch, const lpx_transformer_layer& layer) {
  const std::uint32_t rows = batch.rows();
  if (layer.wqkv == nullptr) {
    project(*layer.wq, norm_.data(), q_.data(), batch);
    project(*layer.wk, norm_.data(), k_.data(), batch);
    project(*layer.wv, norm_.data(), v_.data(), batch);
    return;
  }
  const std::size_t width = q_width_ + 2 * std::size_t{kv_width_};
  project(*layer.wqkv, norm_.data(), qkv_.data(), batch);
  copy_columns(qkv_.data(), width, 0, q_width_, rows, q_.data());
  copy_columns(qkv_.data(), width, q_width_, kv_width_, rows, k_.data());
  copy_columns(qkv_.data(), width, q_width_ + kv_width_, kv_width_, rows, v_.data());
}

void TransformerForward::attention_block(const Batch& batch, const lpx_transformer_layer& layer,
                                         std::uint32_t index) {
  const std::uint32_t rows = batch.rows();
  backend_.rms_norm(x_.data(), floats(layer.attn_norm), norm_.data(), rows, d_.n_embd,
                    d_.norm_eps);
  project_qkv(batch, layer);
  add_bias(q_.data(), layer.bq, rows, q_width_);
  add_bias(k_.data(), layer.bk, rows, kv_width_);
  add_bias(v_.data(), layer.bv, rows, kv_width_);
  // q/k norms: each head is a row of head_dim.
  if (layer.q_norm != nullptr) {
    backend_.rms_norm(q_.data(), floats(layer.q_norm), q_.data(), std::size_t{rows} * d_.n_head,
                      d_.head_dim, d_.norm_eps);
  }
  if (layer.k_norm != nullptr) {
    backend_.rms_norm(k_.data(), floats(layer.k_norm), k_.data(),
                      std::size_t{rows} * d_.n_head_kv, d_.head_dim, d_.norm_eps);
  }
  if (layer.rope != nullptr && layer.rope->n_rot != 0) {
    backend_.rope(q_.data(), rows, d_.n_head, d_.head_dim, batch.positions.data(), *layer.rope);
    backend_.rope(k_.data(), rows, d_.n_head_kv, d_.head_dim, batch.positions.data(),
                  *layer.rope);
  }
  if (scales_queries_) {
    float* q = q_.data();
    for (std::size_t i = 0, n = std::size_t{rows} * q_width_; i < n; ++i) q[i] *= d_.attention_scale;
  }

  for (const BatchSequence& sequence : batch.sequences) {
    for (std::uint32_t r = sequence.first_row; r < sequence.first_row + sequence.n_rows; ++r) {
      cache_.store(index, *sequence.blocks, static_cast<std::uint32_t>(batch.positions[r]),
                   k_.data() + std::size_t{r} * kv_width_, v_.data() + std::size_t{r} * kv_width_);
    }
    lpx_attention_args args{};
    args.struct_size = sizeof(lpx_attention_args);
    args.q = q_.data() + std::size_t{sequence.first_row} * q_width_;
    args.out = attn_.data() + std::size_t{sequence.first_row} * q_width_;
    args.positions = batch.positions.data() + sequence.first_row;
    args.n_rows = sequence.n_rows;
    args.n_heads = d_.n_head;
    args.n_kv_heads = d_.n_head_kv;
    args.head_dim = d_.head_dim;
    args.scale = scales_queries_ ? 1.0f : d_.attention_scale;
    args.k_cache = cache_.k_pool(index);
    args.v_cache = cache_.v_pool(index);
    args.block_table = sequence.blocks->data();
    args.block_size = cache_.shape().block_size;
    args.window = layer.window;
    args.softcap = d_.attention_softcap;
    backend_.attention(args);
  }
  project(*layer.wo, attn_.data(), proj_.data(), batch);
  add_residual(rows, layer.post_attention_norm);
}

void TransformerForward::feed_forward_block(const Batch& batch, const lpx_transformer_layer& layer) {
  const std::uint32_t rows = batch.rows();
  backend_.rms_norm(x_.data(), floats(layer.ffn_norm), norm_.data(), rows, d_.n_embd,
                    d_.norm_eps);
  const std::size_t n_ff = d_.n_ff;
  // gate row r at gate_[r * stride], up row r at up_row(r): split or, fused, side by side.
  std::size_t stride = n_ff;
  const float* up = up_.data();
  if (layer.ffn_gate_up != nullptr) {
    project(*layer.ffn_gate_up, norm_.data(), gate_.data(), batch);
    stride = 2 * n_ff;
    up = gate_.data() + n_ff;
  } else {
    project(*layer.ffn_gate, norm_.data(), gate_.data(), batch);
    project(*layer.ffn_up, norm_.data(), up_.data(), batch);
  }
  // Row by row (the kernels' arithmetic treats a call's last n % 8 elements differently), into
  // the packed rows x n_ff the down projection reads: row r's output never overwrites a gate
  // or up value a later row still needs (its start r * n_ff <= r * stride).
  for (std::uint32_t r = 0; r < rows; ++r) {
    const float* gate = gate_.data() + r * stride;
    float* out = gate_.data() + r * n_ff;
    if (d_.activation == LPX_ACTIVATION_GELU_TANH) {
      backend_.geglu(gate, up + r * stride, out, n_ff);
    } else {
      backend_.swiglu(gate, up + r * stride, out, n_ff);
    }
  }
  project(*layer.ffn_down, gate_.data(), proj_.data(), batch);
  add_residual(rows, layer.post_ffn_norm);
}

void TransformerForward::add_residual(std::uint32_t rows, const lpx_tensor_view* post_norm) {
  const std::size_t n = std::size_t{rows} * d_.n_embd;
  if (post_norm != nullptr) {
    backend_.rms_norm(proj_.data(), floats(post_norm), proj_.data(), rows, d_.n_embd,
                      d_.norm_eps);
  }
  scale_in_place(proj_.data(), n, d_.residual_scale);
  for (std::size_t i = 0; i < n; ++i) x_[i] += proj_[i];
}

}  // namespace lpx::core
