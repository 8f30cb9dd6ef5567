// gemma2: Gemma 2 (2B, 9B, 27B). Gemma's layer (see gemma_family.hpp) without q/k norms,
// local (4096-position window) and global layers alternating, attention scores soft-capped at
// 50 and logits at 30; the output head is always the embedding.
#include "model/architectures/gemma_family.hpp"

namespace lpx::core {
namespace {

constexpr GemmaVariant kGemma2{
    .layout = {.name = "gemma2", .rope_mode = LPX_ROPE_NEOX, .post_norms = true,
               .output_is_embedding = true, .rope_freqs = false},
    .default_window = 4096,
    .default_pattern = 2,
    .local_rope_is_global = true,
    .attention_softcap = true,
    .default_attention_softcap = 50,
    .default_final_softcap = 30,
    .n_layer_27b = 46};

}  // namespace

extern const Architecture kGemma2Architecture;
const Architecture kGemma2Architecture{
    "gemma2",
    [](const Hyperparameters& h) { return decoder_tensors(h, kGemma2.layout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_gemma(file, h, kGemma2);
    }};

}  // namespace lpx::core
