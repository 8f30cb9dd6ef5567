#include "dense_model.hpp"

#include <string>

#include <lpx/cpp/status.hpp>

namespace lpx::cuda_backend {
namespace {

[[noreturn]] void unsupported(const std::string& why) {
  throw lpx::Error(LPX_ERR_UNSUPPORTED, "the cuda backend cannot run this model: " + why);
}

std::string feature_list(std::uint64_t bits) {
  std::string out;
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1) {
    if ((bits & bit) == 0) continue;
    const char* name = lpx_model_feature_name(bit);
    out += (out.empty() ? "" : ", ") + (name != nullptr ? std::string(name)
                                                        : "feature bit " + std::to_string(bit));
  }
  return out;
}

const float* floats(const lpx_tensor_view* view) {
  return view != nullptr ? static_cast<const float*>(view->data) : nullptr;
}

}  // namespace

DenseModel dense_model(const lpx_transformer_desc& d) {
  if (d.struct_size < sizeof(lpx_transformer_desc) || d.layer_stride < sizeof(lpx_transformer_layer)) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "model_load: the description is too small");
  }
  if (const std::uint64_t missing = d.features & ~kCudaFeatures; missing != 0) {
    unsupported("it lacks " + feature_list(missing));
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
  // with the same parameters (the first layer's), no window, no post-norms.
  m.rope = lpx_transformer_layer_at(&d, 0)->rope;
  if (m.rope.mode != LPX_ROPE_NORMAL && m.rope.mode != LPX_ROPE_NEOX) {
    unsupported("rope mode " + std::to_string(m.rope.mode));
  }
  if (m.rope.n_rot % 2 != 0 || m.rope.n_rot > m.head_dim) {
    unsupported("rope over " + std::to_string(m.rope.n_rot) + " of " +
                std::to_string(m.head_dim) + " dims");
  }
  m.layers.reserve(d.n_layer);
  for (std::uint32_t i = 0; i < d.n_layer; ++i) {
    const lpx_transformer_layer& l = *lpx_transformer_layer_at(&d, i);
    m.layers.push_back({l.attn_norm, l.wq, l.wk, l.wv, l.wo, floats(l.bq), floats(l.bk),
                        floats(l.bv), l.ffn_norm, l.ffn_gate, l.ffn_up, l.ffn_down});
  }
  return m;
}

}  // namespace lpx::cuda_backend
