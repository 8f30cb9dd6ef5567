#include "dense_model.hpp"

#include <string>

#include <lpx/cpp/model_features.hpp>
#include <lpx/cpp/status.hpp>

namespace lpx::cuda_backend {
namespace {

[[noreturn]] void unsupported(const std::string& why) {
  throw lpx::Error(LPX_ERR_UNSUPPORTED, "the cuda backend cannot run this model: " + why);
}

[[noreturn]] void malformed(std::uint32_t layer, const std::string& why) {
  throw lpx::Error(LPX_ERR_INVALID_ARGUMENT,
                   "model_load: layer " + std::to_string(layer) + " " + why);
}

// An f32 vector as the kernels read it (a bias or a norm's weights): `width` values, or null.
const float* f32_vector(const lpx_tensor_view* view, std::size_t width, std::uint32_t layer,
                        const char* what) {
  if (view == nullptr) return nullptr;
  if (view->data == nullptr || view->type != LPX_TENSOR_F32 ||
      view->size_bytes < width * sizeof(float)) {
    malformed(layer, std::string("has a ") + what + " that is not " + std::to_string(width) +
                         " f32 values");
  }
  return static_cast<const float*>(view->data);
}

// Rows [first, first + rows) of a fused matrix of `total_rows` x `columns`, as a view of their
// own, kept in `model`.
const lpx_tensor_view* row_range(DenseModel& model, const lpx_tensor_view& whole,
                                 std::int64_t columns, std::int64_t total_rows, std::int64_t first,
                                 std::int64_t rows, std::uint32_t layer) {
  if (whole.n_dims != 2 || whole.dims[0] != columns || whole.dims[1] != total_rows ||
      whole.data == nullptr || whole.size_bytes % static_cast<std::uint64_t>(total_rows) != 0) {
    malformed(layer, std::string("has a fused matrix '") + whole.name + "' of the wrong shape");
  }
  const std::uint64_t row_bytes = whole.size_bytes / static_cast<std::uint64_t>(whole.dims[1]);
  auto part = std::make_shared<lpx_tensor_view>(whole);
  part->dims[1] = rows;
  part->data = static_cast<const std::uint8_t*>(whole.data) + first * row_bytes;
  part->size_bytes = static_cast<std::uint64_t>(rows) * row_bytes;
  model.split_views.push_back(part);
  return part.get();
}

float scale_or_one(float s) { return s == 0.0f ? 1.0f : s; }

// One layer's rope, checked: rotates nothing (n_rot 0), or an even number of dims in a known
// pair order.
lpx_rope_params layer_rope(const lpx_transformer_layer& l, std::uint32_t head_dim,
                           std::uint32_t index) {
  if (l.rope == nullptr || l.rope->n_rot == 0) return lpx_rope_params{};  // NoPE
  const lpx_rope_params& r = *l.rope;
  if (r.mode != LPX_ROPE_NORMAL && r.mode != LPX_ROPE_NEOX) {
    unsupported("layer " + std::to_string(index) + " has rope mode " + std::to_string(r.mode));
  }
  if (r.n_rot % 2 != 0 || r.n_rot > head_dim) {
    unsupported("layer " + std::to_string(index) + " ropes " + std::to_string(r.n_rot) +
                " of " + std::to_string(head_dim) + " dims");
  }
  return r;
}

}  // namespace

DenseModel dense_model(const lpx_transformer_desc& d) {
  if (d.struct_size < sizeof(lpx_transformer_desc) || d.layer_stride < sizeof(lpx_transformer_layer)) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "model_load: the description is too small");
  }
  if (const std::uint64_t missing = d.features & ~kCudaFeatures; missing != 0) {
    unsupported("it lacks " + lpx::model_feature_names(missing));
  }
  if (d.n_layer == 0 || d.n_head == 0 || d.n_head_kv == 0 || d.n_head % d.n_head_kv != 0) {
    unsupported(std::to_string(d.n_head) + " query heads over " + std::to_string(d.n_head_kv) +
                " KV heads");
  }
  if (d.head_dim == 0 || d.head_dim > 1024) {
    unsupported("head size " + std::to_string(d.head_dim) + " (at most 1024)");
  }
  if (d.max_sequences == 0 || d.max_rows == 0 || d.kv_block_size == 0 || d.max_context == 0) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "model_load: zero-sized limits");
  }
  if (d.activation != LPX_ACTIVATION_SILU && d.activation != LPX_ACTIVATION_GELU_TANH) {
    unsupported("activation " + std::to_string(d.activation));
  }
  DenseModel m{};
  m.n_layer = d.n_layer;
  m.n_embd = d.n_embd;
  m.n_head = d.n_head;
  m.n_head_kv = d.n_head_kv;
  m.head_dim = d.head_dim;
  m.n_ff = d.n_ff;
  m.n_vocab = d.n_vocab;
  m.rms_norm_eps = d.norm_eps;
  m.attention_scale = d.attention_scale;
  m.gelu = d.activation == LPX_ACTIVATION_GELU_TANH;
  m.attention_softcap = d.attention_softcap > 0.0f ? d.attention_softcap : 0.0f;
  m.embedding_scale = scale_or_one(d.embedding_scale);
  m.residual_scale = scale_or_one(d.residual_scale);
  m.logit_scale = scale_or_one(d.logit_scale);
  m.final_softcap = d.final_softcap > 0.0f ? d.final_softcap : 0.0f;
  m.token_embd = d.token_embd;
  m.output_norm = d.output_norm;
  m.output = d.output;
  m.kv_block_size = d.kv_block_size;
  m.kv_blocks = d.kv_blocks;
  m.max_rows = d.max_rows;
  m.max_sequences = d.max_sequences;
  m.max_context = d.max_context;

  const std::int64_t q_width = std::int64_t{d.n_head} * d.head_dim;
  const std::int64_t kv_width = std::int64_t{d.n_head_kv} * d.head_dim;
  m.layers.reserve(d.n_layer);
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const lpx_transformer_layer& l = *lpx_transformer_layer_at(&d, i);
    if (l.struct_size != 0 && l.struct_size < sizeof(lpx_transformer_layer)) {
      malformed(i, "is too small");
    }
    DenseLayer layer{};
    layer.attn_norm = l.attn_norm;
    if (l.wqkv != nullptr) {  // [q | k | v] by rows
      const std::int64_t rows = q_width + 2 * kv_width;
      layer.wq = row_range(m, *l.wqkv, d.n_embd, rows, 0, q_width, i);
      layer.wk = row_range(m, *l.wqkv, d.n_embd, rows, q_width, kv_width, i);
      layer.wv = row_range(m, *l.wqkv, d.n_embd, rows, q_width + kv_width, kv_width, i);
    } else {
      layer.wq = l.wq;
      layer.wk = l.wk;
      layer.wv = l.wv;
    }
    layer.wo = l.wo;
    layer.bq = f32_vector(l.bq, static_cast<std::size_t>(q_width), i, "q bias");
    layer.bk = f32_vector(l.bk, static_cast<std::size_t>(kv_width), i, "k bias");
    layer.bv = f32_vector(l.bv, static_cast<std::size_t>(kv_width), i, "v bias");
    layer.q_norm = f32_vector(l.q_norm, d.head_dim, i, "q norm");
    layer.k_norm = f32_vector(l.k_norm, d.head_dim, i, "k norm");
    layer.post_attention_norm = f32_vector(l.post_attention_norm, d.n_embd, i, "post-attention norm");
    layer.ffn_norm = l.ffn_norm;
    if (l.ffn_gate_up != nullptr) {  // [gate | up] by rows
      const std::int64_t n_ff = d.n_ff;
      layer.ffn_gate = row_range(m, *l.ffn_gate_up, d.n_embd, 2 * n_ff, 0, n_ff, i);
      layer.ffn_up = row_range(m, *l.ffn_gate_up, d.n_embd, 2 * n_ff, n_ff, n_ff, i);
    } else {
      layer.ffn_gate = l.ffn_gate;
      layer.ffn_up = l.ffn_up;
    }
    layer.ffn_down = l.ffn_down;
    layer.post_ffn_norm = f32_vector(l.post_ffn_norm, d.n_embd, i, "post-feed-forward norm");
    layer.window = l.window;
    layer.rope = layer_rope(l, d.head_dim, i);
    m.layers.push_back(layer);
  }
  return m;
}

}  // namespace lpx::cuda_backend
