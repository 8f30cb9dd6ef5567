// granite: IBM Granite 3.x dense. Llama with four scalar multipliers from the metadata: the
// embeddings', each residual branch's, the attention's (which replaces 1/sqrt(head_dim)) and
// the logits' (a divisor); rope.scaling.finetuned false turns rope off.
#include "model/architectures/decoder_layout.hpp"
#include "model/metadata_reads.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "granite", .rope_mode = LPX_ROPE_NORMAL};

Expected<TransformerModel> describe_granite(const ModelFile& file, const Hyperparameters& h) {
  const auto in_file = [&](Status s) { return unexpected(std::move(s).with_context(file.path())); };
  auto logit_scale = read_positive(file, "granite.logit_scale");
  if (!logit_scale) return in_file(logit_scale.error());
  auto residual_scale = read_non_negative(file, "granite.residual_scale", 0);
  if (!residual_scale) return in_file(residual_scale.error());
  auto embedding_scale = read_non_negative(file, "granite.embedding_scale", 0);
  if (!embedding_scale) return in_file(embedding_scale.error());
  auto attention_scale = read_non_negative(file, "granite.attention.scale", 0);
  if (!attention_scale) return in_file(attention_scale.error());
  auto rope = read_flag(file, "granite.rope.scaling.finetuned", true);
  if (!rope) return in_file(rope.error());

  auto model = describe_decoder(file, h, kLayout);
  if (!model) return model;
  lpx_transformer_desc& d = model->desc();
  d.logit_scale = 1.0f / static_cast<float>(*logit_scale);  // in f32, as llama.cpp divides
  d.residual_scale = static_cast<float>(*residual_scale);    // 0 reads as 1
  d.embedding_scale = static_cast<float>(*embedding_scale);  // likewise
  if (*attention_scale > 0) d.attention_scale = static_cast<float>(*attention_scale);
  if (!*rope) {
    for (lpx_transformer_layer& l : model->layers()) l.rope = nullptr;
  }
  return finish_decoder(file, std::move(*model));
}

}  // namespace

extern const Architecture kGraniteArchitecture;
const Architecture kGraniteArchitecture{
    "granite",
    [](const Hyperparameters& h) { return decoder_tensors(h, kLayout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_granite(file, h);
    }};

}  // namespace lpx::core
