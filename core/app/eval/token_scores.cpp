#include "eval/token_scores.hpp"

#include <cmath>

namespace lpx::core::eval {
namespace {

struct RowSummary {
  std::size_t argmax = 0;
  double log_normalizer = 0;  // log sum_i exp(l_i)
};

RowSummary summarize(std::span<const float> logits) {
  RowSummary s;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[s.argmax]) s.argmax = i;
  }
  const double max = logits[s.argmax];
  double sum = 0;
  for (const float l : logits) sum += std::exp(static_cast<double>(l) - max);
  s.log_normalizer = max + std::log(sum);
  return s;
}

// Standard error of a mean from the sums of values and squares of n samples.
double standard_error(double sum, double squares, std::uint64_t n) {
  if (n < 2) return 0;
  const double mean = sum / static_cast<double>(n);
  const double variance = (squares / static_cast<double>(n) - mean * mean) * static_cast<double>(n) / static_cast<double>(n - 1);
  return variance > 0 ? std::sqrt(variance / static_cast<double>(n)) : 0;
}

}  // namespace

PositionScore score_position(std::span<const float> eval, std::span<const float> reference,
                             std::int32_t target) {
  const RowSummary e = summarize(eval);
  const RowSummary r = summarize(reference);
  const auto t = static_cast<std::size_t>(target);
  PositionScore score;
  score.nll = e.log_normalizer - static_cast<double>(eval[t]);
  score.reference_nll = r.log_normalizer - static_cast<double>(reference[t]);
  double kl = 0;
  for (std::size_t i = 0; i < eval.size(); ++i) {
    const double log_p_ref = static_cast<double>(reference[i]) - r.log_normalizer;
    const double log_p_eval = static_cast<double>(eval[i]) - e.log_normalizer;
    kl += std::exp(log_p_ref) * (log_p_ref - log_p_eval);
  }
  score.kl = kl > 0 ? kl : 0;  // rounding can leave -1e-17 where the rows are equal
  score.same_top1 = e.argmax == r.argmax;
  return score;
}

void ScoreTotals::add(const PositionScore& score) noexcept {
  ++n_;
  nll_ += score.nll;
  nll_squares_ += score.nll * score.nll;
  reference_nll_ += score.reference_nll;
  kl_ += score.kl;
  kl_squares_ += score.kl * score.kl;
  same_top1_ += score.same_top1 ? 1 : 0;
}

double ScoreTotals::perplexity() const noexcept {
  return n_ == 0 ? 0 : std::exp(nll_ / static_cast<double>(n_));
}

double ScoreTotals::perplexity_error() const noexcept {
  return perplexity() * standard_error(nll_, nll_squares_, n_);
}

double ScoreTotals::reference_perplexity() const noexcept {
  return n_ == 0 ? 0 : std::exp(reference_nll_ / static_cast<double>(n_));
}

double ScoreTotals::mean_kl() const noexcept { return n_ == 0 ? 0 : kl_ / static_cast<double>(n_); }

double ScoreTotals::kl_error() const noexcept { return standard_error(kl_, kl_squares_, n_); }

double ScoreTotals::top1_agreement() const noexcept {
  return n_ == 0 ? 0 : static_cast<double>(same_top1_) / static_cast<double>(n_);
}

}  // namespace lpx::core::eval
