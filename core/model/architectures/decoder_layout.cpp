#include "model/architectures/decoder_layout.hpp"

#include <string>

#include "model/rope_scaling.hpp"
#include "model/tensor_lookup.hpp"

namespace lpx::core {

void add_decoder_tensors(const Hyperparameters& h, const DecoderLayout& layout,
                         std::vector<ExpectedTensor>& out) {
  const std::int64_t embd = h.n_embd;
  const std::int64_t q = std::int64_t{h.n_head} * h.head_dim;
  const std::int64_t k = std::int64_t{h.n_head_kv} * h.head_dim;
  const std::int64_t v = std::int64_t{h.n_head_kv} * h.head_dim_v;
  const std::int64_t attn_out = std::int64_t{h.n_head} * h.head_dim_v;
  out.push_back({"token_embd.weight", {embd, h.n_vocab}, true});
  out.push_back({"output_norm.weight", {embd}, true});
  if (!layout.output_is_embedding) {
    out.push_back({"output.weight", {embd, h.n_vocab}, false});  // absent: tied to token_embd
  }
  if (layout.rope_freqs) out.push_back({"rope_freqs.weight", {h.n_rot / 2}, false});  // Llama 3
  for (std::uint32_t layer = 0; layer < h.n_layer; ++layer) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    out.push_back({b + "attn_norm.weight", {embd}, true});
    if (layout.fused_qkv) {
      out.push_back({b + "attn_qkv.weight", {embd, q + k + v}, true});
    } else {
      out.push_back({b + "attn_q.weight", {embd, q}, true});
      out.push_back({b + "attn_k.weight", {embd, k}, true});
      out.push_back({b + "attn_v.weight", {embd, v}, true});
    }
    if (layout.qkv_bias) {
      out.push_back({b + "attn_q.bias", {q}, true});
      out.push_back({b + "attn_k.bias", {k}, true});
      out.push_back({b + "attn_v.bias", {v}, true});
    }
    if (layout.qk_norm) {
      out.push_back({b + "attn_q_norm.weight", {h.head_dim}, true});
      out.push_back({b + "attn_k_norm.weight", {h.head_dim}, true});
    }
    out.push_back({b + "attn_output.weight", {attn_out, embd}, true});
    if (layout.post_norms) out.push_back({b + "post_attention_norm.weight", {embd}, true});
    out.push_back({b + "ffn_norm.weight", {embd}, true});
    if (layout.fused_gate_up) {
      out.push_back({b + "ffn_up.weight", {embd, 2 * std::int64_t{h.n_ff}}, true});
    } else {
      out.push_back({b + "ffn_gate.weight", {embd, h.n_ff}, true});
      out.push_back({b + "ffn_up.weight", {embd, h.n_ff}, true});
    }
    out.push_back({b + "ffn_down.weight", {h.n_ff, embd}, true});
    if (layout.post_norms) out.push_back({b + "post_ffw_norm.weight", {embd}, true});
    if (layout.rope_freqs) out.push_back({b + "attn_rot_embd", {h.n_rot / 2}, false});  // old files
  }
}

std::vector<ExpectedTensor> decoder_tensors(const Hyperparameters& h, const DecoderLayout& layout) {
  std::vector<ExpectedTensor> tensors;
  add_decoder_tensors(h, layout, tensors);
  return tensors;
}

Expected<TransformerModel> describe_decoder(const ModelFile& file, const Hyperparameters& h,
                                            const DecoderLayout& layout) {
  if (h.head_dim_v != h.head_dim) {
    return unsupported(file.path() + ": key and value head sizes differ (" +
                       std::to_string(h.head_dim) + " vs " + std::to_string(h.head_dim_v) +
                       "); LPX needs them equal");
  }
  TransformerModel model = start_description(layout.name, h);
  lpx_transformer_desc& d = model.desc();

  TensorLookup t(file);
  d.token_embd = t.required("token_embd.weight");
  d.output_norm = t.required("output_norm.weight");
  d.output = layout.output_is_embedding ? nullptr : t.optional("output.weight");
  if (d.output == nullptr) d.output = d.token_embd;

  lpx_rope_params rope = new_rope();
  rope.mode = layout.rope_mode;
  rope.n_rot = h.n_rot;
  rope.freq_base = static_cast<float>(h.rope_freq_base);
  if (h.rope_scaling == RopeScaling::linear) {
    rope.freq_scale = static_cast<float>(1.0 / h.rope_scaling_factor);
  }
  const lpx_tensor_view* freqs = layout.rope_freqs ? file.find_tensor("rope_freqs.weight") : nullptr;
  if (freqs != nullptr) {
    if (freqs->type != LPX_TENSOR_F32) {
      return invalid_argument(file.path() + ": tensor 'rope_freqs.weight' must be f32");
    }
    const auto* data = static_cast<const float*>(freqs->data);
    rope.freq_factors = model.keep(std::vector<float>(data, data + h.n_rot / 2));
  } else if (h.rope_scaling == RopeScaling::llama3) {
    if (!layout.rope_freqs) {
      return unsupported(file.path() + ": " + h.architecture + " with llama3 rope scaling");
    }
    auto factors = llama3_rope_factors(file, h);
    if (!factors) return unexpected(factors.error().with_context(file.path()));
    rope.freq_factors = model.keep(std::move(*factors));
  }

  const lpx_rope_params* every_layer = model.keep(rope);
  for (std::uint32_t i = 0; i < h.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    lpx_transformer_layer l = new_layer();
    l.rope = every_layer;
    l.attn_norm = t.required(b + "attn_norm.weight");
    if (layout.fused_qkv) {
      l.wqkv = t.required(b + "attn_qkv.weight");
    } else {
      l.wq = t.required(b + "attn_q.weight");
      l.wk = t.required(b + "attn_k.weight");
      l.wv = t.required(b + "attn_v.weight");
    }
    if (layout.qkv_bias) {
      l.bq = t.required(b + "attn_q.bias");
      l.bk = t.required(b + "attn_k.bias");
      l.bv = t.required(b + "attn_v.bias");
    }
    if (layout.qk_norm) {
      l.q_norm = t.required(b + "attn_q_norm.weight");
      l.k_norm = t.required(b + "attn_k_norm.weight");
    }
    l.wo = t.required(b + "attn_output.weight");
    if (layout.post_norms) {
      l.post_attention_norm = t.required(b + "post_attention_norm.weight");
      l.post_ffn_norm = t.required(b + "post_ffw_norm.weight");
    }
    l.ffn_norm = t.required(b + "ffn_norm.weight");
    if (layout.fused_gate_up) {
      l.ffn_gate_up = t.required(b + "ffn_up.weight");
    } else {
      l.ffn_gate = t.required(b + "ffn_gate.weight");
      l.ffn_up = t.required(b + "ffn_up.weight");
    }
    l.ffn_down = t.required(b + "ffn_down.weight");
    model.layers().push_back(l);
  }
  if (!t.error().empty()) return invalid_argument(file.path() + ": " + t.error());
  return model;
}

Expected<TransformerModel> finish_decoder(const ModelFile& file, TransformerModel model) {
  if (auto ok = model.finish(); !ok) return unexpected(std::move(ok).error().with_context(file.path()));
  return model;
}

Expected<TransformerModel> describe_plain_decoder(const ModelFile& file, const Hyperparameters& h,
                                                  const DecoderLayout& layout) {
  auto model = describe_decoder(file, h, layout);
  if (!model) return model;
  return finish_decoder(file, std::move(*model));
}

}  // namespace lpx::core
