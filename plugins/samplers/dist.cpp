// dist: picks a token at random in proportion to its probability. Each sequence has its own
// generator seeded at creation: the same seed gives the same choices, on any machine.
#include <random>

#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class Generator final : public lpx::SamplerState {
 public:
  explicit Generator(std::uint64_t seed) : seed_(seed), engine_(seed) {}
  // Uniform in [0, 1) from the top 53 bits: defined by the standard engine alone, unlike
  // std::uniform_real_distribution, whose algorithm varies between libraries.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  void restart() { engine_.seed(seed_); }

 private:
  std::uint64_t seed_;
  std::mt19937_64 engine_;
};

class Dist final : public lpx::Sampler {
 public:
  explicit Dist(const lpx::Options&) {}

  std::unique_ptr<lpx::SamplerState> make_state(std::uint64_t seed) override {
    return std::make_unique<Generator>(seed);
  }

  void apply(lpx::SamplerState* state, lpx_candidates& c) override {
    if (state == nullptr) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "dist needs a sequence state");
    if (c.size == 0) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "no candidates to pick from");
    lpx::samplers::select_by_probability(c, static_cast<Generator*>(state)->uniform());
  }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_DIST, 0, 0.0};
    return true;
  }
  // The draw apply() would make: a device running the chain as a program uses it instead.
  double draw_uniform(lpx::SamplerState* state) noexcept override {
    return state == nullptr ? 0.0 : static_cast<Generator*>(state)->uniform();
  }

  void reset(lpx::SamplerState* state) noexcept override {
    if (state != nullptr) static_cast<Generator*>(state)->restart();
  }
};

constexpr const char* kCapabilities[] = {"sampler:selects", "sampler:stateful"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<Dist>({.name = "dist",
                              .version = "1.0.0",
                              .license = "Apache-2.0",
                              .description = "Pick a token at random by probability (seeded per sequence)",
                              .options = {},
                              .capabilities = kCapabilities});
}
