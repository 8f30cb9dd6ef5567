// ban-tokens: removes chosen token ids from the candidates, so they can never be sampled.
// Put it before the selecting sampler in a chain. A complete example of an LPX plugin: options
// with validation, a per-instance configuration, an allocation-free hot path.
#include <algorithm>
#include <vector>

#include <lpx/cpp/plugin.hpp>

namespace {

class BanTokens final : public lpx::Sampler {
 public:
  explicit BanTokens(const lpx::Options& options) {
    for (std::int64_t id : options.get_int_list("tokens")) banned_.push_back(static_cast<std::int32_t>(id));
    std::sort(banned_.begin(), banned_.end());
  }

  // Runs while the pipeline is validated, before anything is created.
  static void validate(const lpx::Options& options) {
    if (options.get_int_list("tokens").empty()) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "tokens: list at least one token id to ban");
    }
  }

  // Compacts the list in place (no allocation on the decode path) and keeps its order.
  void apply(lpx::SamplerState*, lpx_candidates& candidates) override {
    size_t kept = 0;
    for (size_t i = 0; i < candidates.size; ++i) {
      if (!std::binary_search(banned_.begin(), banned_.end(), candidates.data[i].id)) {
        candidates.data[kept++] = candidates.data[i];
      }
    }
    if (kept == 0) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "every candidate token is banned");
    candidates.size = kept;
    candidates.selected = -1;           // indices moved: any earlier choice is void
    candidates.has_probabilities = 0;   // the remaining probabilities no longer sum to 1
  }

 private:
  std::vector<std::int32_t> banned_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::required(lpx::option("tokens", LPX_OPTION_INT_LIST, nullptr,
                                            "Token ids that must never be generated")),
                  0, 2147483647),
};
constexpr const char* kCapabilities[] = {"sampler:filters"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<BanTokens>({.name = "ban-tokens",
                                   .version = "1.0.0",
                                   .license = "Apache-2.0",
                                   .description = "Never generate the listed token ids",
                                   .options = kOptions,
                                   .capabilities = kCapabilities});
}
