#include "engine/stop_matcher.hpp"

#include <gtest/gtest.h>

namespace lpx::core {
namespace {

// Feeds pieces; returns what was released and whether a stop was hit.
std::pair<std::string, bool> feed(StopMatcher& m, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) {
    auto r = m.push(p);
    out += r.text;
    if (r.stopped) return {out, true};
  }
  out += m.finish();
  return {out, false};
}

TEST(StopMatcher, WithoutStopsEverythingPassesAtOnce) {
  StopMatcher m;
  EXPECT_EQ(m.push("abc").text, "abc");
  EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, FindsAStopSplitAcrossPieces) {
  StopMatcher m({"\nUser:"});
  auto [text, stopped] = feed(m, {"Hello", " there\n", "Us", "er:", " more"});
  EXPECT_TRUE(stopped);
  EXPECT_EQ(text, "Hello there");
}

TEST(StopMatcher, HoldsBackOnlyWhatCouldStartAStop) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("abcST").text, "abc");  // "ST" might become STOP
  EXPECT_EQ(m.push("ay").text, "STay");    // it did not
  EXPECT_EQ(m.finish(), "");
}

TEST(StopMatcher, ReleasesHeldTextWhenTheStreamEnds) {
  StopMatcher m({"STOP"});
  EXPECT_EQ(m.push("abcSTO").text, "abc");
  EXPECT_EQ(m.finish(), "STO");
}

TEST(StopMatcher, TheEarliestStopWins) {
  StopMatcher m({"world", "lo w"});
  auto r = m.push("hello world");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "hel");
}

TEST(StopMatcher, MultiByteCharactersAreNeverCut) {
  // The stop starts with the same lead byte as the text's character: the hold-back must cover
  // whole characters only, and released text must stay valid UTF-8.
  StopMatcher m({"é!"});
  auto r = m.push("café");
  EXPECT_EQ(r.text, "caf");  // "é" may start "é!"
  r = m.push("s");
  EXPECT_EQ(r.text, "és");
  r = m.push("é!");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "");
}

TEST(StopMatcher, EmptyStopStringsAreIgnored) {
  StopMatcher m({""});
  auto r = m.push("abc");
  EXPECT_FALSE(r.stopped);
  EXPECT_EQ(r.text, "abc");
}

}  // namespace
}  // namespace lpx::core
