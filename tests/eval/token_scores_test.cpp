// eval/token_scores: one position's negative log-likelihood, KL divergence and top-1 match, and
// the totals perplexity reports, against values worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "eval/token_scores.hpp"

namespace lpx::core::eval {
namespace {

TEST(TokenScores, OnePositionAgainstHandWorkedValues) {
  // eval: p = (1/4, 3/4); reference: p = (1/2, 1/2), its maximum tied (the lower id counts).
  const std::vector<float> eval{0.0f, std::log(3.0f)};
  const std::vector<float> reference{5.0f, 5.0f};
  const PositionScore s = score_position(eval, reference, 1);
  EXPECT_NEAR(s.nll, -std::log(0.75), 1e-7);
  EXPECT_NEAR(s.reference_nll, std::log(2.0), 1e-12);
  EXPECT_NEAR(s.kl, 0.5 * std::log(0.5 / 0.25) + 0.5 * std::log(0.5 / 0.75), 1e-7);
  EXPECT_FALSE(s.same_top1);
  const PositionScore self = score_position(eval, eval, 0);
  EXPECT_EQ(self.kl, 0.0);
  EXPECT_TRUE(self.same_top1);
  EXPECT_NEAR(self.nll, std::log(4.0), 1e-7);
}

TEST(TokenScores, LargeLogitsDoNotOverflow) {
  const std::vector<float> eval{1000.0f, 1000.0f, -1000.0f};
  const PositionScore s = score_position(eval, eval, 0);
  EXPECT_NEAR(s.nll, std::log(2.0), 1e-12);
  EXPECT_TRUE(std::isfinite(s.kl));
}

TEST(TokenScores, TotalsAreMeansWithStandardErrors) {
  ScoreTotals totals;
  EXPECT_EQ(totals.perplexity(), 0.0);
  totals.add({.nll = 1.0, .reference_nll = 2.0, .kl = 0.1, .same_top1 = true});
  totals.add({.nll = 3.0, .reference_nll = 2.0, .kl = 0.3, .same_top1 = false});
  EXPECT_EQ(totals.count(), 2u);
  EXPECT_NEAR(totals.perplexity(), std::exp(2.0), 1e-12);
  EXPECT_NEAR(totals.reference_perplexity(), std::exp(2.0), 1e-12);
  // nll 1 and 3: sample deviation sqrt(2), standard error 1.
  EXPECT_NEAR(totals.perplexity_error(), std::exp(2.0) * 1.0, 1e-9);
  EXPECT_NEAR(totals.mean_kl(), 0.2, 1e-12);
  EXPECT_NEAR(totals.kl_error(), 0.1, 1e-9);
  EXPECT_EQ(totals.top1_agreement(), 0.5);
}

}  // namespace
}  // namespace lpx::core::eval
