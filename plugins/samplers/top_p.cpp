// top-p (nucleus): keeps the most likely tokens whose probabilities add up to at least p.
#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class TopP final : public lpx::Sampler {
 public:
  explicit TopP(const lpx::Options& options)
      : p_(options.get_float("p")), min_keep_(static_cast<std::size_t>(options.get_int("min_keep"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    lpx::samplers::apply_top_p(c, p_, min_keep_);
  }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_TOP_P, static_cast<std::uint32_t>(min_keep_), p_};
    return true;
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
