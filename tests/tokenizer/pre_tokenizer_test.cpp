// Pre-tokenizer regexes under PCRE2: the rewrite for U+0085, llama.cpp's splitting rules (pieces
// between matches are kept, `$` only at the end of a piece), every known pre-tokenizer compiles.
#include "tokenizer/pre_tokenizer.hpp"

#include <gtest/gtest.h>

#include "lpx/cpp/utf8.hpp"
#include "tokenizer/utf8.hpp"

namespace lpx::core::detail {
namespace {

using Pieces = std::vector<std::string>;

Pieces split(const std::vector<std::string_view>& patterns, std::string_view text) {
  auto splitter = RegexSplitter::compile(patterns);
  EXPECT_TRUE(splitter) << splitter.error();
  if (!splitter) return {};
  auto match_data = (*splitter)->make_match_data();
  std::vector<std::string_view> out;
  std::vector<std::string_view> spare;
  auto done = (*splitter)->split(text, *match_data, out, spare);
  EXPECT_TRUE(done) << done.error();
  return Pieces(out.begin(), out.end());
}

Pieces split_with(std::string_view pre, std::string_view text) {
  const PreTokenizerSpec* spec = find_pre_tokenizer(pre);
  EXPECT_NE(spec, nullptr) << pre;
  return spec == nullptr ? Pieces{} : split(spec->patterns, text);
}

constexpr const char* kSpace =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

TEST(PreTokenizer, SpellsWhitespaceOutAsUnicodeWhiteSpace) {
  const std::string s = kSpace;
  EXPECT_EQ(adapt_pattern_for_pcre2(R"(\s+(?!\S)|\s+)"),
            "[" + s + "]+(?![^" + s + "])|[" + s + "]+");
  EXPECT_EQ(adapt_pattern_for_pcre2(R"( ?[^\s\p{Lu}]+[\r\n]*)"), " ?[^" + s + R"(\p{Lu}]+[\r\n]*)");
  // Escaped brackets and \p{..} pass through; the class ends at the unescaped ].
  EXPECT_EQ(adapt_pattern_for_pcre2(R"([\[\]\p{Han}]\s)"), R"([\[\]\p{Han}])" "[" + s + "]");
}

TEST(PreTokenizer, WidensMajorCategoriesToUnicode15) {
  // Inside a class the additions are inline; outside, \p{N} becomes a class of its own.
  constexpr const char* kNumbers = R"(\x{11F50}-\x{11F59}\x{1D2C0}-\x{1D2D3}\x{1E4F0}-\x{1E4F9})";
  EXPECT_EQ(adapt_pattern_for_pcre2(R"([^\r\p{N}]|\p{N}{1,3})"),
            std::string(R"([^\r\p{N})") + kNumbers + R"(]|[\p{N})" + kNumbers + "]{1,3}");
  for (const char* category : {"L", "N", "P", "S", "M"}) {
    const std::string pattern = std::string(R"(\p{)") + category + "}";
    EXPECT_GT(adapt_pattern_for_pcre2(pattern).size(), pattern.size() + 10) << category;
  }
  EXPECT_EQ(adapt_pattern_for_pcre2(R"(\P{L}\p{Lu}\x{41})"), R"(\P{L}\p{Lu}\x{41})");
  EXPECT_EQ(adapt_pattern_for_pcre2(R"([^\r\p{N}]|\p{N}{1,3})", /*unicode_15_classes=*/false),
            R"([^\r\p{N}]|\p{N}{1,3})");
}

TEST(PreTokenizer, FindsUnicode15AdditionsInText) {
  EXPECT_FALSE(has_unicode_15_addition("plain ASCII, Grüße, 你好, 😀, \xE0\xB3\xB2 \xF0\xAE\xAF\xAF"));
  EXPECT_TRUE(has_unicode_15_addition("x \xE0\xB3\xB3"));        // U+0CF3 (a mark)
  EXPECT_TRUE(has_unicode_15_addition("\xE2\xBF\xBC"));          // U+2FFC (a symbol)
  EXPECT_TRUE(has_unicode_15_addition("\xE3\x87\xAF y"));        // U+31EF
  EXPECT_TRUE(has_unicode_15_addition("ab\xF0\xAE\xAF\xB0"));   // U+2EBF0, first of CJK Ext. I
  EXPECT_TRUE(has_unicode_15_addition("\xF0\xB2\x8E\xAF"));     // U+323AF, last of CJK Ext. H
  EXPECT_FALSE(has_unicode_15_addition("\xF0\xB2\x8E\xB0"));    // U+323B0: unassigned
}

// As llama.cpp, whose tables are Unicode 15.1: CJK Extension I (15.1) and Kawi (15.0) are letters,
// Nag Mundari and Kaktovik digits (15.0) are numbers. Debian 12's PCRE2 alone has them unassigned.
TEST(PreTokenizer, KnowsUnicode15LettersAndDigits) {
  const std::string cjk_i = "\xF0\xAE\xB6\xB6";       // U+2EDB6
  const std::string kawi = "\xF0\x91\xBC\x84";        // U+11F04 KAWI LETTER A
  const std::string mundari_0 = "\xF0\x9E\x93\xB0";   // U+1E4F0 NAG MUNDARI DIGIT ZERO
  const std::string mundari_1 = "\xF0\x9E\x93\xB1";   // U+1E4F1
  const std::string kaktovik = "\xF0\x9D\x8B\x80";    // U+1D2C0 KAKTOVIK NUMERAL ZERO
  EXPECT_EQ(split_with("llama-bpe", "A" + cjk_i + "(n"), (Pieces{"A" + cjk_i, "(n"}));
  EXPECT_EQ(split_with("qwen2", "(" + kawi + kawi + " x"), (Pieces{"(" + kawi + kawi, " x"}));
  EXPECT_EQ(split_with("qwen2", "x" + mundari_0 + mundari_1), (Pieces{"x", mundari_0, mundari_1}));
  EXPECT_EQ(split_with("llama-bpe", "x" + mundari_0 + mundari_1 + kaktovik + kaktovik),
            (Pieces{"x", mundari_0 + mundari_1 + kaktovik, kaktovik}));
  EXPECT_EQ(split_with("gpt-2", " " + cjk_i + "1"), (Pieces{" " + cjk_i, "1"}));
}

TEST(PreTokenizer, WhitespaceIsUnicodeWhiteSpace) {
  // U+0085 (next line) and U+00A0 are spaces: each stands alone before a letter.
  EXPECT_EQ(split_with("gpt-2", "a\xC2\x85\xC2\x85" "b"), (Pieces{"a", "\xC2\x85", "\xC2\x85", "b"}));
  EXPECT_EQ(split_with("gpt-2", "a\xC2\xA0\xC2\xA0" "b"), (Pieces{"a", "\xC2\xA0", "\xC2\xA0", "b"}));
  // U+180E is a format character, not a space (PCRE2's own \s would say otherwise): one run.
  EXPECT_EQ(split_with("gpt-2", "a\xE1\xA0\x8E\xE1\xA0\x8E" "b"),
            (Pieces{"a", "\xE1\xA0\x8E\xE1\xA0\x8E", "b"}));
}

TEST(PreTokenizer, Gpt2SplitsWordsNumbersPunctuationAndSpaces) {
  EXPECT_EQ(split_with("gpt-2", "Hello, y'all! 123   go\n"),
            (Pieces{"Hello", ",", " y", "'", "all", "!", " 123", "  ", " go", "\n"}));
}

TEST(PreTokenizer, SmolLMIsolatesDigitsFirst) {
  EXPECT_EQ(split_with("smollm", "x 2024!"), (Pieces{"x", " ", "2", "0", "2", "4", "!"}));
}

TEST(PreTokenizer, Llama3KeepsThreeDigitsAndCaseInsensitiveContractions) {
  EXPECT_EQ(split_with("llama-bpe", "I'M 12345 ok\n\n"), (Pieces{"I", "'M", " ", "123", "45", " ok", "\n\n"}));
}

TEST(PreTokenizer, PiecesBetweenMatchesAreKept) {
  EXPECT_EQ(split({"[0-9]+"}, "ab12cd3"), (Pieces{"ab", "12", "cd", "3"}));
  // Later regexes only see inside earlier pieces.
  EXPECT_EQ(split({"[0-9]+", "[a-z]"}, "ab12"), (Pieces{"a", "b", "12"}));
}

TEST(PreTokenizer, DollarMatchesOnlyAtTheEndOfAPiece) {
  EXPECT_EQ(split({" $"}, "a \n"), (Pieces{"a \n"}));
  EXPECT_EQ(split({" $"}, "a "), (Pieces{"a", " "}));
}

TEST(PreTokenizer, EveryKnownPreTokenizerCompiles) {
  const std::string known = known_pre_tokenizers();
  std::size_t start = 0;
  int count = 0;
  while (start < known.size()) {
    std::size_t end = known.find(", ", start);
    if (end == std::string::npos) end = known.size();
    const std::string name = known.substr(start, end - start);
    const PreTokenizerSpec* spec = find_pre_tokenizer(name);
    ASSERT_NE(spec, nullptr) << name;
    auto splitter = RegexSplitter::compile(spec->patterns);
    EXPECT_TRUE(splitter) << name << ": " << splitter.error();
    ++count;
    start = end + 2;
  }
  EXPECT_GE(count, 40);
  for (const char* name : {"default", "gpt-2", "llama-bpe", "qwen2", "smollm", "starcoder", "refact",
                           "mpt", "falcon", "deepseek-coder"}) {
    EXPECT_NE(find_pre_tokenizer(name), nullptr) << name;
  }
  EXPECT_EQ(find_pre_tokenizer("gpt-5"), nullptr);
}

TEST(PreTokenizer, LongInputsDoNotExhaustPcre2) {
  const std::string spaces(1 << 20, ' ');
  EXPECT_EQ(split_with("llama-bpe", spaces + "x").size(), 2u);
  const std::string letters(1 << 20, 'a');
  EXPECT_EQ(split_with("gpt-2", letters).size(), 1u);
}

TEST(PreTokenizer, DeepBacktrackingGetsABiggerJitStack) {
  // Each repetition of an alternation keeps a backtracking point: far beyond the default stack.
  const std::string text = std::string(200000, 'a') + "c";
  EXPECT_EQ(split({"(?:a|b)+c"}, text), (Pieces{text}));
}

TEST(Utf8, SanitizesLikeLlamaCpp) {
  std::string out;
  sanitize_utf8("a\xE2\x82" "b\xFF\xC0\x80" "c\xED\xA0\x80", out);
  // cut-short sequence: one U+FFFD per byte; overlong and surrogate: one per sequence
  EXPECT_EQ(out, "a\xEF\xBF\xBD\xEF\xBF\xBD" "b\xEF\xBF\xBD\xEF\xBF\xBD" "c\xEF\xBF\xBD");
  EXPECT_TRUE(utf8::is_well_formed(out));
  EXPECT_FALSE(utf8::is_well_formed("\xF4\x90\x80\x80"));
}

TEST(Utf8, FindsAnIncompleteLastCharacter) {
  EXPECT_EQ(incomplete_utf8_tail("abc"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("a\xF0\x9F"), 2u);
  EXPECT_EQ(incomplete_utf8_tail("a\xF0\x9F\xA6"), 3u);
  EXPECT_EQ(incomplete_utf8_tail("a\xF0\x9F\xA6\x99"), 0u);
  EXPECT_EQ(incomplete_utf8_tail("\xE2"), 1u);
  EXPECT_EQ(incomplete_utf8_tail("\xE0\x80"), 0u);  // cannot become a character: nothing to wait for
  EXPECT_EQ(incomplete_utf8_tail("\x80\x80"), 0u);
}

}  // namespace
}  // namespace lpx::core::detail
