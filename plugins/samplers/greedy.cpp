// greedy: always the most likely token (the highest logit; the first one on ties).
// Deterministic and stateless; the reference for token-exact comparisons with other engines.
#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class Greedy final : public lpx::Sampler {
 public:
  explicit Greedy(const lpx::Options&) {}

  void apply(lpx::SamplerState*, lpx_candidates& candidates) override {
    if (!lpx::samplers::select_greedy(candidates)) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "no candidates to pick from");
    }
  }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_GREEDY, 0, 0.0};
    return true;
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
