#include "dense_model.hpp"

#include <string>

#include <lpx/cpp/model_features.hpp>
#include <lpx/cpp/status.hpp>

namespace lpx::cuda_backend {
namespace {

[[noreturn]] void unsupported(const std::string& why) {
  throw lpx::Error(LPX_ERR_UNSUPPORTED, "the cuda backend cannot run this model: " + why);
}

// A bias as the kernels read it: `width` f32 values, or null.
const float* bias(const lpx_tensor_view* view, std::size_t width, std::uint32_t layer) {
  if (view == nullptr) return nullptr;
  if (view->type != LPX_TENSOR_F32 || view->size_bytes < width * sizeof(float)) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "model_load: layer " + std::to_string(layer) +
                                                   " has a bias that is not " +
                                                   std::to_string(width) + " f32 values");
  }
  return static_cast<const float*>(view->data);
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
  m.token_embd = d.token_embd;
  m.output_norm = d.output_norm;
  m.output = d.output;
  m.kv_block_size = d.kv_block_size;
  m.kv_blocks = d.kv_blocks;
  m.max_rows = d.max_rows;
  m.max_sequences = d.max_sequences;
  m.max_context = d.max_context;
  // Without the features above every layer is alike: split projections, rope on all of them
  // with the same parameters (the first layer's), no window, no post-norms. Checked on the
  // layers themselves too, not only on the bits the host computed.
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const lpx_transformer_layer& l = *lpx_transformer_layer_at(&d, i);
    if (l.rope == nullptr || l.rope->n_rot == 0 || l.window != 0 || l.wqkv != nullptr ||
        l.ffn_gate_up != nullptr || l.q_norm != nullptr || l.k_norm != nullptr ||
        l.post_attention_norm != nullptr || l.post_ffn_norm != nullptr) {
      unsupported("layer " + std::to_string(i) + " uses features its flags do not state");
    }
  }
  const auto no_scale = [](float s) { return s == 0.0f || s == 1.0f; };
  if (d.activation != LPX_ACTIVATION_SILU || d.attention_softcap > 0.0f || d.final_softcap > 0.0f ||
      !no_scale(d.embedding_scale) || !no_scale(d.residual_scale) || !no_scale(d.logit_scale)) {
    unsupported("its activation, scales or soft caps, which its flags do not state");
  }
  m.rope = *lpx_transformer_layer_at(&d, 0)->rope;
  for (std::uint32_t i = 1; i < d.n_layer; ++i) {
    const lpx_rope_params& r = *lpx_transformer_layer_at(&d, i)->rope;
    if (r.mode != m.rope.mode || r.n_rot != m.rope.n_rot || r.freq_base != m.rope.freq_base ||
        r.freq_scale != m.rope.freq_scale || r.freq_factors != m.rope.freq_factors) {
      unsupported("layer " + std::to_string(i) + " has rope parameters of its own");
    }
  }
  if (m.rope.attn_factor != 0.0f && m.rope.attn_factor != 1.0f) {
    unsupported("a rope attention factor, which its flags do not state");
  }
  if (m.rope.mode != LPX_ROPE_NORMAL && m.rope.mode != LPX_ROPE_NEOX) {
    unsupported("rope mode " + std::to_string(m.rope.mode));
  }
  if (m.rope.n_rot % 2 != 0 || m.rope.n_rot > m.head_dim) {
    unsupported("rope over " + std::to_string(m.rope.n_rot) + " of " +
                std::to_string(m.head_dim) + " dims");
  }
  const std::size_t q_width = std::size_t{d.n_head} * d.head_dim;
  const std::size_t kv_width = std::size_t{d.n_head_kv} * d.head_dim;
  m.layers.reserve(d.n_layer);
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const lpx_transformer_layer& l = *lpx_transformer_layer_at(&d, i);
    m.layers.push_back({l.attn_norm, l.wq, l.wk, l.wv, l.wo, bias(l.bq, q_width, i),
                        bias(l.bk, kv_width, i), bias(l.bv, kv_width, i), l.ffn_norm,
                        l.ffn_gate, l.ffn_up, l.ffn_down});
  }
  return m;
}

}  // namespace lpx::cuda_backend
