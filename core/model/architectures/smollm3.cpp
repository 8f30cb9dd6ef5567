// smollm3: SmolLM3 (3B). Llama with no rope on every fourth layer (layers 3, 7, 11, ...: the
// model's no_rope_layer_interval; the converter writes no key for it, so the rule is fixed, as
// in llama.cpp).
#include "model/architectures/decoder_layout.hpp"

namespace lpx::core {
namespace {

constexpr DecoderLayout kLayout{.name = "smollm3", .rope_mode = LPX_ROPE_NORMAL};
constexpr std::uint32_t kNoRopeInterval = 4;

}  // namespace

extern const Architecture kSmolLM3Architecture;
const Architecture kSmolLM3Architecture{
    "smollm3",
    [](const Hyperparameters& h) { return decoder_tensors(h, kLayout); },
    [](const ModelFile& file, const Hyperparameters& h, const RunShape&) -> Expected<TransformerModel> {
      auto model = describe_decoder(file, h, kLayout);
      if (!model) return model;
      for (std::uint32_t l = 0; l < h.n_layer; ++l) {
        if ((l + 1) % kNoRopeInterval == 0) model->layers()[l].rope = nullptr;
      }
      return finish_decoder(file, std::move(*model));
    }};

}  // namespace lpx::core
