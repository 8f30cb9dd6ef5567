// top-k: keeps the k most likely tokens (0 = all).
#include <lpx/cpp/plugin.hpp>

#include <lpx/cpp/sampling_ops.hpp>

namespace {

class TopK final : public lpx::Sampler {
 public:
  explicit TopK(const lpx::Options& options) : k_(static_cast<std::size_t>(options.get_int("k"))) {}

  void apply(lpx::SamplerState*, lpx_candidates& c) override { lpx::samplers::apply_top_k(c, k_); }

  bool standard_op(lpx_sampling_op& op) const noexcept override {
    op = {LPX_SAMPLING_TOP_K, static_cast<std::uint32_t>(k_), 0.0};
    return true;
  }

 private:
  std::size_t k_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("k", LPX_OPTION_INT, "40", "Tokens to keep; 0 keeps all"), 0,
                  1 << 30),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<TopK>({.name = "top-k",
                              .version = "1.0.0",
                              .license = "Apache-2.0",
                              .description = "Keep the k most likely tokens",
                              .options = kOptions,
                              .capabilities = kCapabilities});
}
