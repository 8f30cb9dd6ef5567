// lpx/cpp/utf8.hpp: well-formedness and U+FFFD substitution of maximal subparts.
#include "lpx/cpp/utf8.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace lpx::utf8 {
namespace {

// U+FFFD, spelled so that expectations are single literals.
#define U_FFFD "\xEF\xBF\xBD"
constexpr std::string_view kFffd = U_FFFD;

TEST(Utf8, WellFormedTextIsKeptAsItIs) {
  for (const char *text : {"", "ok", "caf\xC3\xA9", "\xE4\xB8\xAD\xE5\x9B\xBD", "\xF0\x9F\x99\x82",
                           "\xF4\x8F\xBF\xBF", "\xED\x9F\xBF", "\xEE\x80\x80"}) {
    EXPECT_TRUE(is_well_formed(text)) << text;
    EXPECT_EQ(repair(text), text);
  }
}

TEST(Utf8, ACutCharacterIsOneReplacement) {
  EXPECT_EQ(repair("\xE5\x93"), U_FFFD);  // the first two bytes of U+54EA
  EXPECT_EQ(repair("\xF0\x9F\x99"), U_FFFD);
  EXPECT_EQ(repair("ab\xF0\x9F"), "ab" U_FFFD);
  EXPECT_EQ(repair("\xE5"), U_FFFD);
  EXPECT_EQ(repair("\xE5\x93x"), U_FFFD "x");  // cut short by an ASCII byte
}

TEST(Utf8, UnicodeTable3_8Example) {
  // The Unicode Standard, §3.9, table 3-8: 61 F1 80 80 E1 80 C2 62 80 63 80 BF 64.
  EXPECT_EQ(repair("a\xF1\x80\x80\xE1\x80\xC2"
                   "b\x80"
                   "c\x80\xBF"
                   "d"),
            "a" U_FFFD U_FFFD U_FFFD "b" U_FFFD "c" U_FFFD U_FFFD "d");
}

TEST(Utf8, BytesThatNeverStartACharacterAreOneReplacementEach) {
  EXPECT_EQ(repair("\xC0\xAF"), U_FFFD U_FFFD);  // overlong '/'
  EXPECT_EQ(repair("\xE0\x80\xAF"),
            U_FFFD U_FFFD U_FFFD);  // overlong: E0 needs A0..BF next
  EXPECT_EQ(repair("\xED\xA0\x80"),
            U_FFFD U_FFFD U_FFFD);  // a surrogate: ED needs 80..9F next
  EXPECT_EQ(repair("\xF4\x90\x80\x80"),
            U_FFFD U_FFFD U_FFFD U_FFFD);  // past U+10FFFF
  EXPECT_EQ(repair("\xF5\xFF\xFE"), U_FFFD U_FFFD U_FFFD);
  EXPECT_EQ(repair("\x80\x80"), U_FFFD U_FFFD);
  for (const char *bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80", "\xE5\x93"}) {
    EXPECT_FALSE(is_well_formed(bad)) << bad;
  }
}

TEST(Utf8, AppendKeepsWhatIsAlreadyThere) {
  std::string out = "x";
  append_repaired(out, "\xC3");
  append_repaired(out, "\xC3\xA9");
  EXPECT_EQ(out, "x" U_FFFD "\xC3\xA9");
}

// Properties over random bytes: the result is well-formed, well-formed input is unchanged, and
// every replacement stands for at least one input byte.
TEST(Utf8, RepairAlwaysGivesWellFormedText) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> size(0, 24);
  for (int i = 0; i < 20000; ++i) {
    std::string text(static_cast<std::size_t>(size(rng)), '\0');
    for (char &c : text) c = static_cast<char>(byte(rng));
    const std::string repaired = repair(text);
    ASSERT_TRUE(is_well_formed(repaired));
    if (is_well_formed(text)) {
      ASSERT_EQ(repaired, text);
    }
    std::size_t replacements = 0;
    for (std::size_t at = repaired.find(kFffd); at != std::string::npos;
         at = repaired.find(kFffd, at + 3)) {
      ++replacements;
    }
    ASSERT_LE(repaired.size() - 3 * replacements, text.size());
    ASSERT_LE(replacements, text.size());
  }
}

}  // namespace
}  // namespace lpx::utf8
