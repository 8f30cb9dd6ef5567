#include "model/transformer_model.hpp"

#include <cstring>

namespace lpx::core {
namespace {

bool same_rope(const lpx_rope_params& a, const lpx_rope_params& b) {
  return a.mode == b.mode && a.n_rot == b.n_rot && a.freq_base == b.freq_base &&
         a.freq_scale == b.freq_scale && a.freq_factors == b.freq_factors &&
         scale_or_one(a.attn_factor) == scale_or_one(b.attn_factor);
}

std::string layer_name(std::uint32_t i) { return "layer " + std::to_string(i) + ": "; }

Expected<bool> check_layer(const lpx_transformer_desc& d, const lpx_transformer_layer& l,
                           std::uint32_t i) {
  const bool split_qkv = l.wq != nullptr && l.wk != nullptr && l.wv != nullptr;
  const bool any_split = l.wq != nullptr || l.wk != nullptr || l.wv != nullptr;
  if ((l.wqkv != nullptr) == any_split || (any_split && !split_qkv)) {
    return invalid_argument(layer_name(i) + "needs either wq, wk and wv or one wqkv");
  }
  const bool split_ffn = l.ffn_gate != nullptr && l.ffn_up != nullptr;
  if ((l.ffn_gate_up != nullptr) == (l.ffn_gate != nullptr || l.ffn_up != nullptr) ||
      (l.ffn_gate_up == nullptr && !split_ffn)) {
    return invalid_argument(layer_name(i) + "needs either ffn_gate and ffn_up or one ffn_gate_up");
  }
  if (l.attn_norm == nullptr || l.wo == nullptr || l.ffn_norm == nullptr || l.ffn_down == nullptr) {
    return invalid_argument(layer_name(i) + "lacks attn_norm, wo, ffn_norm or ffn_down");
  }
  for (const lpx_tensor_view* f32 : {l.attn_norm, l.ffn_norm, l.bq, l.bk, l.bv, l.q_norm, l.k_norm,
                                     l.post_attention_norm, l.post_ffn_norm}) {
    if (f32 != nullptr && f32->type != LPX_TENSOR_F32) {
      return invalid_argument(std::string("tensor '") + f32->name +
                        "' must be f32 (norm weights and biases are read as floats)");
    }
  }
  if (l.rope == nullptr) return true;
  const lpx_rope_params& r = *l.rope;
  if (r.struct_size < sizeof(lpx_rope_params) || r.n_rot % 2 != 0 || r.n_rot > d.head_dim ||
      (r.mode != LPX_ROPE_NORMAL && r.mode != LPX_ROPE_NEOX)) {
    return invalid_argument(layer_name(i) + "rope over " + std::to_string(r.n_rot) + " of " +
                      std::to_string(d.head_dim) + " dims (mode " + std::to_string(r.mode) +
                      ") is not an even count within the head");
  }
  return true;
}

}  // namespace

TransformerModel::TransformerModel() {
  desc_.struct_size = sizeof(lpx_transformer_desc);
  desc_.activation = LPX_ACTIVATION_SILU;
  desc_.embedding_scale = 1.0f;
  desc_.residual_scale = 1.0f;
  desc_.logit_scale = 1.0f;
}

const float* TransformerModel::keep(std::vector<float> values) {
  return kept_.emplace_back(std::move(values)).data();
}

const lpx_rope_params* TransformerModel::keep(const lpx_rope_params& rope) {
  return &ropes_.emplace_back(rope);
}

std::uint32_t TransformerModel::kv_window() const noexcept {
  std::uint32_t widest = 0;
  for (const lpx_transformer_layer& l : layers_) {
    if (l.window == 0) return 0;
    widest = l.window > widest ? l.window : widest;
  }
  return widest;
}

lpx_transformer_layer new_layer() {
  lpx_transformer_layer l{};
  l.struct_size = sizeof(lpx_transformer_layer);
  return l;
}

lpx_rope_params new_rope() {
  lpx_rope_params r{};
  r.struct_size = sizeof(lpx_rope_params);
  r.freq_scale = 1.0f;
  r.attn_factor = 1.0f;
  return r;
}

Expected<bool> TransformerModel::finish() {
  desc_.struct_size = sizeof(lpx_transformer_desc);
  desc_.n_layer = static_cast<std::uint32_t>(layers_.size());
  desc_.layers = layers_.data();
  desc_.layer_stride = sizeof(lpx_transformer_layer);
  if (desc_.n_head == 0 || desc_.n_head_kv == 0 || desc_.n_head % desc_.n_head_kv != 0 ||
      desc_.head_dim == 0) {
    return invalid_argument(std::to_string(desc_.n_head) + " query heads over " +
                      std::to_string(desc_.n_head_kv) + " KV heads of size " +
                      std::to_string(desc_.head_dim) + " cannot form attention");
  }
  if (desc_.token_embd == nullptr || desc_.output_norm == nullptr || desc_.output == nullptr) {
    return invalid_argument(std::string("the description lacks token_embd, output_norm or output"));
  }
  for (std::uint32_t i = 0; i < desc_.n_layer; ++i) {
    if (auto ok = check_layer(desc_, layers_[i], i); !ok) return ok;
  }
  desc_.features = required_features(desc_);
  return true;
}

std::uint64_t required_features(const lpx_transformer_desc& d) {
  std::uint64_t f = 0;
  const lpx_rope_params* first_rope = nullptr;
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const lpx_transformer_layer& l = *lpx_transformer_layer_at(&d, i);
    if (l.bq != nullptr || l.bk != nullptr || l.bv != nullptr) f |= LPX_FEATURE_QKV_BIAS;
    if (l.q_norm != nullptr || l.k_norm != nullptr) f |= LPX_FEATURE_QK_NORM;
    if (l.post_attention_norm != nullptr || l.post_ffn_norm != nullptr) f |= LPX_FEATURE_POST_NORMS;
    if (l.window > 0) f |= LPX_FEATURE_SLIDING_WINDOW;
    if (l.wqkv != nullptr) f |= LPX_FEATURE_FUSED_QKV;
    if (l.ffn_gate_up != nullptr) f |= LPX_FEATURE_FUSED_GATE_UP;
    if (l.rope == nullptr || l.rope->n_rot == 0) {
      f |= LPX_FEATURE_NOPE_LAYERS;
      continue;
    }
    if (l.rope->freq_factors != nullptr) f |= LPX_FEATURE_ROPE_FACTORS;
    if (scale_or_one(l.rope->attn_factor) != 1.0f) f |= LPX_FEATURE_ROPE_ATTN_FACTOR;
    if (first_rope == nullptr) {
      first_rope = l.rope;
    } else if (!same_rope(*first_rope, *l.rope)) {
      f |= LPX_FEATURE_LAYER_ROPE;
    }
  }
  if (d.activation == LPX_ACTIVATION_GELU_TANH) f |= LPX_FEATURE_GELU;
  if (scale_or_one(d.embedding_scale) != 1.0f || scale_or_one(d.residual_scale) != 1.0f ||
      scale_or_one(d.logit_scale) != 1.0f) {
    f |= LPX_FEATURE_SCALES;
  }
  if (d.attention_softcap > 0.0f) f |= LPX_FEATURE_ATTENTION_SOFTCAP;
  if (d.final_softcap > 0.0f) f |= LPX_FEATURE_FINAL_SOFTCAP;
  return f;
}

}  // namespace lpx::core
