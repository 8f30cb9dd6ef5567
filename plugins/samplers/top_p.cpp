// top-p (nucleus): keeps the most likely tokens whose probabilities add up to at least p.
#include <lpx/cpp/plugin.hpp>

#include "candidates_math.hpp"

namespace {

class TopP final : public lpx::Sampler {
 public:
  explicit TopP(const lpx::Options& options)
      : p_(options.get_float("p")), min_keep_(static_cast<std::size_t>(options.get_int("min_keep"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    if (p_ >= 1.0 || c.size == 0) return;
    lpx::samplers::softmax(c);
    double cumulative = 0;
    std::size_t keep = c.size;
    for (std::size_t i = 0; i < c.size; ++i) {
      cumulative += static_cast<double>(c.data[i].p);
      if (cumulative >= p_ && i + 1 >= min_keep_) {
        keep = i + 1;
        break;
      }
    }
    c.size = keep;
    c.selected = -1;
    c.has_probabilities = 0;  // the kept probabilities no longer sum to 1
  }

 private:
  double p_;
  std::size_t min_keep_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("p", LPX_OPTION_FLOAT, "0.95", "Probability mass to keep"), 0, 1),
    lpx::in_range(lpx::option("min_keep", LPX_OPTION_INT, "1", "Keep at least this many tokens"),
                  1, 1 << 30),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<TopP>({.name = "top-p",
                              .version = "1.0.0",
                              .license = "Apache-2.0",
                              .description = "Keep the smallest set of likely tokens with mass >= p",
                              .options = kOptions,
                              .capabilities = kCapabilities});
}
