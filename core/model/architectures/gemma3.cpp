// gemma3: Gemma 3 (270M, 1B and the text part of 4B/12B/27B). Gemma's layer (see
// gemma_family.hpp) with per-head q/k norms; five local layers of a 512- or 1024-position window
// (base 10000) for every global one (base 1e6, linear scaling on 4B and up); no soft caps.
#include "model/architectures/gemma_family.hpp"

namespace lpx::core {
namespace {

constexpr GemmaVariant kGemma3{
    .layout = {.name = "gemma3", .rope_mode = LPX_ROPE_NEOX, .qk_norm = true,
               .post_norms = true, .rope_freqs = false},
    .default_window = 0,
    .default_pattern = 6,
    .local_rope_is_global = false,
    .attention_softcap = false,
    .default_final_softcap = 0,
    .n_layer_27b = 62};

}  // namespace

extern const Architecture kGemma3Architecture;
const Architecture kGemma3Architecture{
    "gemma3",
    [](const Hyperparameters& h) { return decoder_tensors(h, kGemma3.layout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_gemma(file, h, kGemma3);
    }};

}  // namespace lpx::core
