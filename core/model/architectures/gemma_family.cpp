#include "model/architectures/gemma_family.hpp"

#include <cmath>
#include <string>

#include "model/metadata_reads.hpp"

namespace lpx::core {

Expected<TransformerModel> describe_gemma(const ModelFile& file, const Hyperparameters& h,
                                          const GemmaVariant& variant) {
  const std::string p = h.architecture + ".";
  const auto in_file = [&](Status s) { return unexpected(std::move(s).with_context(file.path())); };

  std::uint32_t window = variant.default_window;
  if (file.has(p + "attention.sliding_window")) {
    auto read = file.get_uint(p + "attention.sliding_window");
    if (!read) return in_file(read.error());
    window = static_cast<std::uint32_t>(std::min<std::uint64_t>(*read, UINT32_MAX));
  }
  auto pattern = read_count(file, p + "attention.sliding_window_pattern", variant.default_pattern);
  if (!pattern) return in_file(pattern.error());
  auto local_base = read_positive(file, p + "rope.freq_base_swa", 10000.0);
  if (!local_base) return in_file(local_base.error());
  auto attention_softcap = variant.attention_softcap
                               ? read_non_negative(file, p + "attn_logit_softcapping",
                                                   variant.default_attention_softcap)
                               : Expected<double>(0.0);
  if (!attention_softcap) return in_file(attention_softcap.error());
  auto final_softcap = read_non_negative(file, p + "final_logit_softcapping",
                                         variant.default_final_softcap);
  if (!final_softcap) return in_file(final_softcap.error());

  auto model = describe_decoder(file, h, variant.layout);
  if (!model) return model;
  lpx_transformer_desc& d = model->desc();
  d.activation = LPX_ACTIVATION_GELU_TANH;
  d.embedding_scale = std::sqrt(static_cast<float>(h.n_embd));
  if (h.n_layer == variant.n_layer_27b) {
    d.attention_scale = 1.0f / std::sqrt(static_cast<float>(h.n_embd / h.n_head));
  }
  d.attention_softcap = static_cast<float>(*attention_softcap);
  model->set_scales_queries(true);  // Gemma's reference scales q (query_pre_attn_scalar)
  d.final_softcap = static_cast<float>(*final_softcap);

  if (window > 0) {
    const lpx_rope_params* local_rope = model->layers().front().rope;  // the file's, as global
    if (!variant.local_rope_is_global) {
      lpx_rope_params local = *local_rope;
      local.freq_base = static_cast<float>(*local_base);
      local.freq_scale = 1.0f;
      local_rope = model->keep(local);
    }
    for (std::uint32_t l = 0; l < h.n_layer; ++l) {
      if (l % *pattern == *pattern - 1) continue;  // global
      model->layers()[l].window = window;
      model->layers()[l].rope = local_rope;
    }
  }
  return finish_decoder(file, std::move(*model));
}

}  // namespace lpx::core
