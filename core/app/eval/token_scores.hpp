// What `perplexity` measures at each scored position, and the totals it reports: the evaluated
// run's perplexity, the mean KL divergence from a reference run's distribution, and how often
// both runs rank the same token first (llama-perplexity --kl-divergence reports the same three).
// All sums in double; logits are the raw floats a forward pass wrote.
#pragma once

#include <cstdint>
#include <span>

namespace lpx::core::eval {

struct PositionScore {
  double nll = 0;            // -log p_eval(target)
  double reference_nll = 0;  // -log p_ref(target)
  double kl = 0;             // sum_i p_ref(i) (log p_ref(i) - log p_eval(i)), >= 0
  bool same_top1 = false;    // both argmaxes equal (the lowest id among equal maxima)
};

// `eval` and `reference` hold one row of logits each, of the same vocabulary; `target` is the
// token that follows. Precondition: 0 <= target < eval.size() == reference.size() > 0.
PositionScore score_position(std::span<const float> eval, std::span<const float> reference,
                             std::int32_t target);

// Means of the scores added, each with its standard error (sample deviation / sqrt(n)).
class ScoreTotals {
 public:
  void add(const PositionScore& score) noexcept;

  std::uint64_t count() const noexcept { return n_; }
  // exp(mean nll) and its error propagated from the mean's: ppl * se(nll).
  double perplexity() const noexcept;
  double perplexity_error() const noexcept;
  double reference_perplexity() const noexcept;
  double mean_kl() const noexcept;
  double kl_error() const noexcept;
  double top1_agreement() const noexcept;  // fraction of positions, 0..1

 private:
  std::uint64_t n_ = 0, same_top1_ = 0;
  double nll_ = 0, nll_squares_ = 0, reference_nll_ = 0, kl_ = 0, kl_squares_ = 0;
};

}  // namespace lpx::core::eval
