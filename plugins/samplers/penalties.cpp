// penalties: repetition, frequency and presence penalties over the last N generated tokens.
// A repeated token's logit is divided by `repeat` when positive and multiplied when negative, then
// lowered by count * frequency + presence.
#include <algorithm>
#include <vector>

#include <lpx/cpp/plugin.hpp>

namespace {

// The last N tokens of one sequence and how often each occurs among them.
class History final : public lpx::SamplerState {
 public:
  explicit History(std::size_t window) : ring_(window) {}

  // Makes room to count ids below `n`, then recounts the window (tokens pushed before the room
  // existed are counted now). Called from apply, which may fail, so that push never allocates.
  // Invariant: counts_[t] is how often t (< counts_.size()) occurs in the window.
  void cover_ids(std::size_t n) {
    if (counts_.size() >= n) return;
    counts_.assign(n, 0);
    for (std::size_t k = 0; k < filled_; ++k) {
      const auto t = static_cast<std::size_t>(ring_[k]);
      if (t < counts_.size()) ++counts_[t];
    }
  }

  void push(std::int32_t token) noexcept {
    if (ring_.empty() || token < 0) return;
    if (filled_ == ring_.size()) {
      const auto oldest = static_cast<std::size_t>(ring_[next_]);
      if (oldest < counts_.size()) --counts_[oldest];
    } else {
      ++filled_;
    }
    ring_[next_] = token;
    next_ = (next_ + 1) % ring_.size();
    if (static_cast<std::size_t>(token) < counts_.size()) ++counts_[static_cast<std::size_t>(token)];
  }
  std::uint32_t count(std::int32_t token) const noexcept {
    const auto t = static_cast<std::size_t>(token);
    return token >= 0 && t < counts_.size() ? counts_[t] : 0;
  }
  void clear() {
    std::fill(counts_.begin(), counts_.end(), 0u);
    filled_ = next_ = 0;
  }

 private:
  std::vector<std::int32_t> ring_;
  std::vector<std::uint32_t> counts_;
  std::size_t filled_ = 0, next_ = 0;
};

class Penalties final : public lpx::Sampler {
 public:
  explicit Penalties(const lpx::Options& options)
      : window_(static_cast<std::size_t>(options.get_int("last_n"))),
        repeat_(static_cast<float>(options.get_float("repeat"))),
        frequency_(static_cast<float>(options.get_float("frequency"))),
        presence_(static_cast<float>(options.get_float("presence"))) {}

  std::unique_ptr<lpx::SamplerState> make_state(std::uint64_t) override {
    return std::make_unique<History>(window_);
  }

  void apply(lpx::SamplerState* state, lpx_candidates& c) override {
    if (state == nullptr) throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "penalties need a sequence state");
    auto& history = static_cast<History&>(*state);
    std::int32_t max_id = -1;
    for (std::size_t i = 0; i < c.size; ++i) max_id = std::max(max_id, c.data[i].id);
    history.cover_ids(static_cast<std::size_t>(max_id + 1));  // allocates on the first step only
    for (std::size_t i = 0; i < c.size; ++i) {
      const std::uint32_t n = history.count(c.data[i].id);
      if (n == 0) continue;
      float& logit = c.data[i].logit;
      logit = logit <= 0 ? logit * repeat_ : logit / repeat_;
      logit -= static_cast<float>(n) * frequency_ + presence_;
    }
    c.sorted = 0;
    c.selected = -1;
    c.has_probabilities = 0;
  }

  void accept(lpx::SamplerState* state, std::int32_t token) noexcept override {
    if (state != nullptr) static_cast<History*>(state)->push(token);
  }
  void reset(lpx::SamplerState* state) noexcept override {
    if (state != nullptr) static_cast<History*>(state)->clear();
  }

 private:
  std::size_t window_;
  float repeat_, frequency_, presence_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("last_n", LPX_OPTION_INT, "64", "How many recent tokens count"), 0,
                  1 << 20),
    lpx::in_range(lpx::option("repeat", LPX_OPTION_FLOAT, "1.0", "Repetition penalty; 1 = off"),
                  0.01, 100),
    lpx::in_range(lpx::option("frequency", LPX_OPTION_FLOAT, "0.0",
                              "Subtracted per occurrence; 0 = off"),
                  -2, 2),
    lpx::in_range(lpx::option("presence", LPX_OPTION_FLOAT, "0.0",
                              "Subtracted once if the token occurred; 0 = off"),
                  -2, 2),
};
constexpr const char* kCapabilities[] = {"sampler:filters", "sampler:stateful"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<Penalties>({.name = "penalties",
                                   .version = "1.0.0",
                                   .license = "Apache-2.0",
                                   .description = "Repetition, frequency and presence penalties",
                                   .options = kOptions,
                                   .capabilities = kCapabilities});
}
