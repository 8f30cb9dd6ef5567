// qwen2: Qwen2/2.5. The llama layout with NeoX-style RoPE (rotating halves) and biases on the
// Q, K and V projections.
#include "model/architectures/decoder_layout.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "qwen2", .rope_mode = LPX_ROPE_NEOX, .qkv_bias = true};

}  // namespace

extern const Architecture kQwen2Architecture;
const Architecture kQwen2Architecture{
    "qwen2",
    [](const Hyperparameters& h) { return decoder_tensors(h, kLayout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_plain_decoder(file, h, kLayout);
    }};

}  // namespace lpx::core
