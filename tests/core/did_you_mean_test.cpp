#include "util/did_you_mean.hpp"

#include <gtest/gtest.h>

namespace lpx::core {
namespace {

const std::vector<std::string> kKeys = {"temperature", "top_k", "top_p", "min_p", "seed"};

TEST(DidYouMean, SuggestsTheClosestKeyForATypo) {
  EXPECT_EQ(closest_match("tempreature", kKeys), "temperature");
  EXPECT_EQ(closest_match("top-k", kKeys), "top_k");
  EXPECT_EQ(closest_match("sede", kKeys), "seed");  // a transposition counts once
}

TEST(DidYouMean, StaysQuietWhenNothingIsClose) {
  EXPECT_EQ(closest_match("completely_different", kKeys), "");
  EXPECT_EQ(did_you_mean("zzz", kKeys), "");
}

TEST(DidYouMean, FormatsTheSuggestion) {
  EXPECT_EQ(did_you_mean("top_q", kKeys), " (did you mean 'top_k'?)");
}

TEST(JoinOrNone, ListsItemsOrSaysNone) {
  EXPECT_EQ(join_or_none({}), "none");
  EXPECT_EQ(join_or_none({"a", "b"}), "a, b");
}

}  // namespace
}  // namespace lpx::core
