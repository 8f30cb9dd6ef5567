// logit-bias: adds a fixed amount to the logits of chosen tokens; the default, -1e30, bans them
// (no float survives it: their probability is exactly 0). One link holds
// one bias for a set of tokens; chain several links for different amounts. (Requests can also
// carry their own per-token biases: lpx_sampling_overrides.logit_bias.)
#include <algorithm>
#include <cmath>
#include <vector>

#include <lpx/cpp/plugin.hpp>

namespace {

class LogitBias final : public lpx::Sampler {
 public:
  explicit LogitBias(const lpx::Options& options)
      : bias_(static_cast<float>(options.get_float("bias"))) {
    for (std::int64_t id : options.get_int_list("tokens")) {
      if (static_cast<std::size_t>(id) >= marked_.size()) marked_.resize(static_cast<std::size_t>(id) + 1);
      marked_[static_cast<std::size_t>(id)] = 1;
    }
  }

  static void validate(const lpx::Options& options) {
    const double bias = options.get_float("bias");
    if (!(std::fabs(bias) <= 1e30)) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "bias: must lie between -1e30 and 1e30");
    }
    if (options.get_int_list("tokens").empty()) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "tokens: list at least one token id");
    }
  }

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    bool changed = false;
    for (std::size_t i = 0; i < c.size; ++i) {
      const auto id = static_cast<std::size_t>(c.data[i].id);
      if (id < marked_.size() && marked_[id]) {
        c.data[i].logit += bias_;
        changed = true;
      }
    }
    if (changed) {
      c.sorted = 0;
      c.has_probabilities = 0;
    }
    c.selected = -1;
  }

 private:
  float bias_;
  std::vector<unsigned char> marked_;  // by token id; ids past the end are not biased
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::required(lpx::option("tokens", LPX_OPTION_INT_LIST, nullptr,
                                            "Token ids to bias (lpx-pipeline tokenize shows ids)")),
                  0, 1 << 30),
    lpx::option("bias", LPX_OPTION_FLOAT, "-1e30",
                "Added to each listed token's logit; the default, -1e30, bans them"),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<LogitBias>({.name = "logit-bias",
                                   .version = "1.0.0",
                                   .license = "Apache-2.0",
                                   .description = "Add a bias to chosen tokens' logits (default: ban)",
                                   .options = kOptions,
                                   .capabilities = kCapabilities});
}
