// min-p: keeps the tokens at least p times as likely as the most likely one.
#include <cmath>

#include <lpx/cpp/plugin.hpp>

#include "candidates_math.hpp"

namespace {

class MinP final : public lpx::Sampler {
 public:
  explicit MinP(const lpx::Options& options)
      : p_(options.get_float("p")), min_keep_(static_cast<std::size_t>(options.get_int("min_keep"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    if (p_ <= 0.0 || c.size == 0) return;
    lpx::samplers::sort_descending(c);
    // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p): no softmax needed.
    const double threshold = static_cast<double>(c.data[0].logit) + std::log(p_);
    std::size_t keep = 0;
    while (keep < c.size && static_cast<double>(c.data[keep].logit) >= threshold) ++keep;
    c.size = std::max(keep, std::min(min_keep_, c.size));
    c.selected = -1;
    c.has_probabilities = 0;
  }

 private:
  double p_;
  std::size_t min_keep_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("p", LPX_OPTION_FLOAT, "0.05",
                              "Keep tokens at least this fraction as likely as the best; 0 = off"),
                  0, 1),
    lpx::in_range(lpx::option("min_keep", LPX_OPTION_INT, "1", "Keep at least this many tokens"),
                  1, 1 << 30),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<MinP>({.name = "min-p",
                              .version = "1.0.0",
                              .license = "Apache-2.0",
                              .description = "Keep tokens at least p times as likely as the best",
                              .options = kOptions,
                              .capabilities = kCapabilities});
}
