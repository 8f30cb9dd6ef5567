// Arbitrary input: random bytes (ill-formed UTF-8 included) never make encode or decode fail, and
// come back as they went in — byte for byte for SentencePiece vocabularies (byte tokens). For
// byte-level BPE ones, ill-formed sequences come back as U+FFFD (the text is cleaned before
// splitting), and a byte whose alphabet character the vocabulary lacks is dropped, as llama.cpp
// drops it (Falcon lacks 28 such bytes, SmolLM2 21: control characters and bytes UTF-8 never uses).
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "tokenizer/byte_level.hpp"
#include "tokenizer/utf8.hpp"
#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

std::string random_text(std::mt19937& random, bool spm) {
  static const std::vector<std::string> pieces = {
      " ", "  ", "\n", "\t", "a", "Hello", "\xC3\xA9", "\xE4\xBD\xA0", "\xF0\x9F\x98\x81", "1", "!",
      "<|endoftext|>", "<s>", "</s>", "<|im_start|>", "[PAD50300]", "\xC3\xB5", "'s", "\xC2\x85"};
  std::uniform_int_distribution<int> kind(0, 3);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<std::size_t> piece(0, pieces.size() - 1);
  std::uniform_int_distribution<int> length(0, 40);
  std::string text;
  const int n = length(random);
  for (int k = 0; k < n; ++k) {
    if (kind(random) == 0) {
      // SentencePiece vocabularies get ASCII bytes only: there a broken lead byte just before a
      // space swallows part of the space mark U+2581 (E2 96 81), whose bytes then come back
      // instead of the space (llama.cpp splits characters the same way).
      const int b = byte(random);
      text += static_cast<char>(spm ? b & 0x7F : b);
    } else {
      text += pieces[piece(random)];
    }
  }
  return text;
}

TEST(Robustness, RandomBytesEncodeAndComeBack) {
  if (!std::filesystem::exists(shared_dir() / "vocab")) GTEST_SKIP() << "no ../shared/vocab";
  ModelOpener opener;
  std::mt19937 random(7);
  for (const std::string& name : shared_vocab_names()) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    const core::Tokenizer& tokenizer = *loaded->tokenizer;
    const bool spm = tokenizer.vocabulary().model == core::TokenizerModel::spm;
    const std::set<std::string> texts(tokenizer.vocabulary().tokens.begin(),
                                      tokenizer.vocabulary().tokens.end());
    std::set<char> missing;  // bytes without a token for their alphabet character
    for (int b = 0; b < 256; ++b) {
      const auto character = core::detail::ByteLevel::instance().encode(static_cast<std::uint8_t>(b));
      if (!spm && !texts.contains(std::string(character))) missing.insert(static_cast<char>(b));
    }
    for (int round = 0; round < 300; ++round) {
      const std::string text = random_text(random, spm);
      auto ids = tokenizer.encode(text, {.add_bos = false});
      ASSERT_TRUE(ids) << name << ": " << ids.error();
      auto back = tokenizer.decode(*ids);
      ASSERT_TRUE(back) << back.error();
      std::string expected = text;
      if (!spm) {
        std::string clean;
        core::detail::sanitize_utf8(text, clean);
        expected.clear();
        for (const char c : clean) {
          if (!missing.contains(c)) expected += c;
        }
      }
      EXPECT_EQ(*back, expected) << name << ": '" << printable(text) << "'";
      auto parsed = tokenizer.encode(text, {.parse_special = true});
      ASSERT_TRUE(parsed) << name << ": " << parsed.error();
      EXPECT_TRUE(tokenizer.decode(*parsed, true)) << name;
    }
  }
}

}  // namespace
}  // namespace lpx::test
