// min-p: keeps the tokens at least p times as likely as the most likely one.
#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class MinP final : public lpx::Sampler {
 public:
  explicit MinP(const lpx::Options& options)
      : p_(options.get_float("p")), min_keep_(static_cast<std::size_t>(options.get_int("min_keep"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override {
    lpx::samplers::apply_min_p(c, p_, min_keep_);
  }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_MIN_P, static_cast<std::uint32_t>(min_keep_), p_};
    return true;
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
