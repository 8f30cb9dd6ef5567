// temperature: divides the logits by T. T = 0 keeps only the most likely token (greedy).
#include <limits>

#include <lpx/cpp/plugin.hpp>

#include "candidates_math.hpp"

namespace {

class Temperature final : public lpx::Sampler {
 public:
  explicit Temperature(const lpx::Options& options)
      : temperature_(static_cast<float>(options.get_float("temperature"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    c.has_probabilities = 0;
    if (temperature_ > 0) {
      for (std::size_t i = 0; i < c.size; ++i) c.data[i].logit /= temperature_;
      return;
    }
    lpx::samplers::keep_top(c, c.size == 0 ? 0 : 1);
  }

 private:
  float temperature_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("temperature", LPX_OPTION_FLOAT, "0.8",
                              "Divide logits by this; 0 = always the most likely token"),
                  0, 100),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<Temperature>({.name = "temperature",
                                     .version = "1.0.0",
                                     .license = "Apache-2.0",
                                     .description = "Scale logits by 1/T (T = 0: greedy)",
                                     .options = kOptions,
                                     .capabilities = kCapabilities});
}
