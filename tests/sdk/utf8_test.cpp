// lpx/cpp/utf8.hpp: well-formedness and U+FFFD substitution of maximal subparts.
#include "lpx/cpp/utf8.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <random>
#include <string>
#include <unordered_set>

// U+FFFD, spelled so that expectations are single literals.
#define U_FFFD "\xEF\xBF\xBD"

namespace lpx::utf8 {
namespace {

constexpr std::string_view kFffd = U_FFFD;

TEST(Utf8, WellFormedTextIsKeptAsItIs) {
  for (const char* text : {"", "ok", "caf\xC3\xA9", "\xE4\xB8\xAD\xE5\x9B\xBD", "\xF0\x9F\x99\x82",
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

TEST(Utf8, UnicodeTables3_9To3_12) {
  EXPECT_EQ(repair("\xC0\xAF\xE0\x80\xBF\xF0\x81\x82"
                   "A"),
            U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A");  // non-shortest forms
  EXPECT_EQ(repair("\xED\xA0\x80\xED\xBF\xBF\xED\xAF"
                   "A"),
            U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A");  // surrogates
  EXPECT_EQ(repair("\xF4\x91\x92\x93\xFF"
                   "A\x80\xBF"
                   "B"),
            U_FFFD U_FFFD U_FFFD U_FFFD U_FFFD "A" U_FFFD U_FFFD "B");  // past U+10FFFF, strays
  EXPECT_EQ(repair("\xE1\x80\xE2\xF0\x91\x92\xF1\xBF"
                   "A"),
            U_FFFD U_FFFD U_FFFD U_FFFD "A");  // truncated sequences
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
  for (const char* bad : {"\xC0\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\x80", "\xE5\x93"}) {
    EXPECT_FALSE(is_well_formed(bad)) << bad;
  }
}

TEST(Utf8, AppendKeepsWhatIsAlreadyThere) {
  std::string out = "x";
  append_repaired(out, "\xC3");
  append_repaired(out, "\xC3\xA9");
  EXPECT_EQ(out, "x" U_FFFD "\xC3\xA9");
}

// An oracle built from code points, not byte ranges: the encodings of every scalar value and all
// their prefixes. At each position it takes the longest run of bytes that is such a prefix: a
// whole encoding is kept, anything else is one U+FFFD (at least one byte), which is §3.9's rule.
class Oracle {
 public:
  Oracle() {
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF) continue;
      const std::string bytes = encode(cp);
      complete_.insert(key(bytes));
      for (std::size_t n = 1; n <= bytes.size(); ++n) prefixes_.insert(key(bytes.substr(0, n)));
    }
  }

  std::string repair(std::string_view text) const {
    std::string out;
    for (std::size_t at = 0; at < text.size();) {
      std::size_t longest = 0;
      while (longest < 4 && at + longest < text.size() &&
             prefixes_.count(key(text.substr(at, longest + 1))) != 0) {
        ++longest;
      }
      if (longest != 0 && complete_.count(key(text.substr(at, longest))) != 0) {
        out.append(text.substr(at, longest));
      } else {
        out.append(kFffd);
      }
      at += longest == 0 ? 1 : longest;
    }
    return out;
  }

 private:
  static std::string encode(char32_t cp) {
    std::string out;
    if (cp < 0x80) return std::string(1, static_cast<char>(cp));
    const int n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    static constexpr unsigned char kLead[] = {0, 0, 0xC0, 0xE0, 0xF0};
    out.push_back(static_cast<char>(kLead[n] | (cp >> (6 * (n - 1)))));
    for (int i = n - 2; i >= 0; --i) {
      out.push_back(static_cast<char>(0x80 | ((cp >> (6 * i)) & 0x3F)));
    }
    return out;
  }
  static std::uint64_t key(std::string_view bytes) {
    std::uint64_t k = bytes.size();
    for (const char c : bytes) k = k << 8 | static_cast<unsigned char>(c);
    return k;
  }

  std::unordered_set<std::uint64_t> complete_;
  std::unordered_set<std::uint64_t> prefixes_;
};

TEST(Utf8, RepairAgreesWithACodePointOracle) {
  const Oracle oracle;
  std::string text(2, '\0');
  for (int a = 0; a < 256; ++a) {  // every one- and two-byte string
    text.assign(1, static_cast<char>(a));
    ASSERT_EQ(repair(text), oracle.repair(text)) << a;
    for (int b = 0; b < 256; ++b) {
      text.assign({static_cast<char>(a), static_cast<char>(b)});
      ASSERT_EQ(repair(text), oracle.repair(text)) << a << " " << b;
    }
  }
  // Longer strings from the bytes where the rules change.
  static constexpr unsigned char kEdges[] = {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                             0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1, 0xEC,
                                             0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF};
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kEdges) - 1);
  std::uniform_int_distribution<int> size(3, 10);
  for (int i = 0; i < 50000; ++i) {
    text.resize(static_cast<std::size_t>(size(rng)));
    for (char& c : text) c = static_cast<char>(kEdges[pick(rng)]);
    ASSERT_EQ(repair(text), oracle.repair(text)) << ::testing::PrintToString(text);
  }
}

// Properties over random bytes: the result is well-formed, well-formed input is unchanged, and
// every replacement stands for at least one input byte.
TEST(Utf8, RepairAlwaysGivesWellFormedText) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> size(0, 24);
  for (int i = 0; i < 20000; ++i) {
    std::string text(static_cast<std::size_t>(size(rng)), '\0');
    for (char& c : text) c = static_cast<char>(byte(rng));
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

#undef U_FFFD
