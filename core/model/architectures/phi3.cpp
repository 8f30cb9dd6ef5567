// phi3: Phi-3/3.5-mini, Phi-4-mini. Fused q|k|v and gate|up projections, NeoX rope over
// rope.dimension_count dims with LongRoPE: per-dimension divisors from rope_factors_long or
// rope_factors_short (long when the context runs past rope.scaling.original_context_length,
// chosen once for the whole context, as llama.cpp does) and the rope's attention factor. The
// model's sliding_window is ignored, as llama.cpp ignores it: every layer attends globally.
#include <string>

#include "model/architectures/decoder_layout.hpp"
#include "model/metadata_reads.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "phi3", .rope_mode = LPX_ROPE_NEOX, .fused_qkv = true,
                                .fused_gate_up = true, .rope_freqs = false};

Expected<TransformerModel> describe_phi3(const ModelFile& file, const Hyperparameters& h,
                                         const RunShape& run) {
  const auto in_file = [&](Status s) { return unexpected(std::move(s).with_context(file.path())); };
  auto original = read_count(file, "phi3.rope.scaling.original_context_length", h.n_ctx_train);
  if (!original) return in_file(original.error());
  auto attn_factor = read_positive(file, "phi3.rope.scaling.attn_factor", 1.0);
  if (!attn_factor) return in_file(attn_factor.error());
  const bool long_context = run.context_size > *original;
  const std::string factors_name =
      long_context ? "rope_factors_long.weight" : "rope_factors_short.weight";

  auto model = describe_decoder(file, h, kLayout);
  if (!model) return model;
  lpx_rope_params rope = *model->layers().front().rope;
  rope.attn_factor = static_cast<float>(*attn_factor);
  if (const lpx_tensor_view* factors = file.find_tensor(factors_name)) {
    if (factors->type != LPX_TENSOR_F32) {
      return invalid_argument(file.path() + ": tensor '" + factors_name + "' must be f32");
    }
    const auto* data = static_cast<const float*>(factors->data);
    rope.freq_factors = model->keep(std::vector<float>(data, data + h.n_rot / 2));
  }
  const lpx_rope_params* every_layer = model->keep(rope);
  model->set_scales_queries(true);
  for (lpx_transformer_layer& l : model->layers()) l.rope = every_layer;
  return finish_decoder(file, std::move(*model));
}

}  // namespace

extern const Architecture kPhi3Architecture;
const Architecture kPhi3Architecture{
    "phi3",
    [](const Hyperparameters& h) {
      std::vector<ExpectedTensor> tensors;
      add_decoder_tensors(h, kLayout, tensors);
      tensors.push_back({"rope_factors_long.weight", {h.n_rot / 2}, false});
      tensors.push_back({"rope_factors_short.weight", {h.n_rot / 2}, false});
      return tensors;
    },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape& run) {
      return describe_phi3(file, h, run);
    }};

}  // namespace lpx::core
