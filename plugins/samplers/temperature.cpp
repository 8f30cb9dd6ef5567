// temperature: divides the logits by T. T = 0 keeps only the most likely token (greedy).
#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class Temperature final : public lpx::Sampler {
 public:
  explicit Temperature(const lpx::Options& options)
      : temperature_(static_cast<float>(options.get_float("temperature"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    lpx::samplers::apply_temperature(c, temperature_);
  }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_TEMPERATURE, 0, static_cast<double>(temperature_)};
    return true;
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
