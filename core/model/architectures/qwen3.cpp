// qwen3: Qwen3 dense (0.6B to 32B). The qwen2 layout without the q/k/v biases, with per-head
// RMS norms on q and k before the rope.
#include "model/architectures/decoder_layout.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "qwen3", .rope_mode = LPX_ROPE_NEOX, .qk_norm = true};

}  // namespace

extern const Architecture kQwen3Architecture;
const Architecture kQwen3Architecture{
    "qwen3",
    [](const Hyperparameters& h) { return decoder_tensors(h, kLayout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) {
      return describe_plain_decoder(file, h, kLayout);
    }};

}  // namespace lpx::core
