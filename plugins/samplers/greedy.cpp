// greedy: always the most likely token (the highest logit; the first one on ties).
// Deterministic and stateless; the reference for token-exact comparisons with other engines.
#include <lpx/cpp/plugin.hpp>

namespace {

class Greedy final : public lpx::Sampler {
 public:
  explicit Greedy(const lpx::Options&) {}

  void apply(lpx::SamplerState*, lpx_candidates& candidates) override {
    if (candidates.size == 0) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "no candidates to pick from");
    if (candidates.sorted) {  // already in descending order: the first is the best
      candidates.selected = 0;
      return;
    }
    size_t best = 0;
    for (size_t i = 1; i < candidates.size; ++i) {
      if (candidates.data[i].logit > candidates.data[best].logit) best = i;
    }
    candidates.selected = static_cast<int64_t>(best);
  }
};

constexpr const char* kCapabilities[] = {"sampler:selects", "sampler:deterministic"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<Greedy>({.name = "greedy",
                                .version = "1.0.0",
                                .license = "Apache-2.0",
                                .description = "Pick the most likely token (highest logit)",
                                .options = {},
                                .capabilities = kCapabilities});
}
