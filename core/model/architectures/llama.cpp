// llama: Llama 2/3.x, SmolLM/SmolLM2, TinyLlama, Mistral (without sliding window).
// RMSNorm, RoPE on adjacent pairs (Llama 3 frequency factors from rope_freqs.weight or the
// metadata), grouped-query attention, SwiGLU; the output head may be tied to the embedding.
#include "model/architectures/decoder_layout.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "llama", .rope_mode = LPX_ROPE_NORMAL};

}  // namespace

extern const Architecture kLlamaArchitecture;
const Architecture kLlamaArchitecture{
    "llama",
    [](const Hyperparameters& h) { return decoder_tensors(h, kLayout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_plain_decoder(file, h, kLayout);
    }};

}  // namespace lpx::core
