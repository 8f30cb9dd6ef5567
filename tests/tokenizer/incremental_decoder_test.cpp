// IncrementalDecoder: streamed text equals the full decode, and no chunk ends inside a character.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

using core::IncrementalDecoder;
using core::Tokenizer;

// Expected length of the UTF-8 sequence a lead byte starts (0 for bytes that cannot lead one).
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

// Whether the boundary at `cut` in `stream` falls inside a well-formed UTF-8 character.
bool cuts_a_character(const std::string& stream, std::size_t cut) {
  for (std::size_t back = 1; back <= 3 && back <= cut; ++back) {
    const auto byte = static_cast<unsigned char>(stream[cut - back]);
    if ((byte & 0xC0) == 0x80) continue;
    const std::size_t length = sequence_length(byte);
    if (length <= back || cut - back + length > stream.size()) return false;
    for (std::size_t k = 1; k < length; ++k) {
      if ((static_cast<unsigned char>(stream[cut - back + k]) & 0xC0) != 0x80) return false;
    }
    return true;  // a complete character starts before the cut and ends after it
  }
  return false;
}

void check_stream(const Tokenizer& tokenizer, const std::vector<std::int32_t>& ids,
                  bool render_special, const std::string& label) {
  auto whole = tokenizer.decode(ids, render_special);
  ASSERT_TRUE(whole) << whole.error();
  IncrementalDecoder decoder(tokenizer, render_special);
  std::string streamed;
  std::vector<std::size_t> cuts;
  for (const std::int32_t id : ids) {
    auto chunk = decoder.push(id);
    ASSERT_TRUE(chunk) << chunk.error();
    streamed += *chunk;
    cuts.push_back(streamed.size());
  }
  streamed += decoder.flush();
  ASSERT_EQ(streamed, *whole) << label;
  for (const std::size_t cut : cuts) {
    EXPECT_FALSE(cuts_a_character(streamed, cut)) << label << ": a chunk ends at byte " << cut
                                                  << " inside a character";
  }
}

class IncrementalDecoding : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(shared_dir() / "vocab")) GTEST_SKIP() << "no ../shared/vocab";
  }
  ModelOpener opener;
};

TEST_F(IncrementalDecoding, RandomIdsStreamExactlyAsTheyDecode) {
  std::mt19937 random(20240611);
  for (const std::string& name : shared_vocab_names()) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    const Tokenizer& tokenizer = *loaded->tokenizer;
    std::uniform_int_distribution<std::int32_t> any(0, tokenizer.vocab_size() - 1);
    for (int sequence = 0; sequence < 40; ++sequence) {
      std::vector<std::int32_t> ids(static_cast<std::size_t>(1 + sequence * 3));
      for (std::int32_t& id : ids) id = any(random);
      check_stream(tokenizer, ids, sequence % 2 == 0, name + " #" + std::to_string(sequence));
    }
  }
}

TEST_F(IncrementalDecoding, MultiByteCharactersSplitAcrossTokensAreHeldBack) {
  auto loaded = opener.load(vocab_path("llama-spm"));
  ASSERT_TRUE(loaded) << loaded.error();
  const Tokenizer& tokenizer = *loaded->tokenizer;
  // "🦙" has no token in Llama 2: it becomes the four byte tokens <0xF0><0x9F><0xA6><0x99>.
  auto ids = tokenizer.encode("a\xF0\x9F\xA6\x99" "b", {.add_bos = false});
  ASSERT_TRUE(ids) << ids.error();
  IncrementalDecoder decoder(tokenizer);
  std::vector<std::string> chunks;
  for (const std::int32_t id : *ids) chunks.push_back(*decoder.push(id));
  chunks.push_back(decoder.flush());
  std::string all;
  for (const std::string& c : chunks) {
    all += c;
    // every chunk is whole characters: either empty or valid on its own
    EXPECT_TRUE(c.empty() || !cuts_a_character(all, all.size())) << printable(c);
  }
  EXPECT_EQ(all, "a\xF0\x9F\xA6\x99" "b");
  EXPECT_NE(std::find(chunks.begin(), chunks.end(), "\xF0\x9F\xA6\x99"), chunks.end())
      << "the emoji comes out in one piece";
}

TEST_F(IncrementalDecoding, StreamsEncodedTextForEveryVocabulary) {
  for (const std::string& name : shared_vocab_names()) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    for (const std::string& s : extra_strings()) {
      auto ids = loaded->tokenizer->encode(s);
      ASSERT_TRUE(ids) << ids.error();
      check_stream(*loaded->tokenizer, *ids, false, name + ": " + printable(s));
    }
  }
}

TEST_F(IncrementalDecoding, RejectsIdsOutsideTheVocabulary) {
  auto loaded = opener.load(vocab_path("gpt-2"));
  ASSERT_TRUE(loaded) << loaded.error();
  IncrementalDecoder decoder(*loaded->tokenizer);
  auto bad = decoder.push(50257);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "token id 50257 is outside the vocabulary (50257 tokens)");
  EXPECT_FALSE(decoder.push(-1));
  EXPECT_EQ(*decoder.push(15496), "Hello");
  auto decoded = loaded->tokenizer->decode(std::vector<std::int32_t>{15496, 99999});
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().message, "token id 99999 is outside the vocabulary (50257 tokens)");
}

TEST_F(IncrementalDecoding, ResetStartsANewStream) {
  auto loaded = opener.load(vocab_path("llama-spm"));
  ASSERT_TRUE(loaded) << loaded.error();
  IncrementalDecoder decoder(*loaded->tokenizer);
  EXPECT_EQ(*decoder.push(15043), "Hello");   // "▁Hello": first id, space dropped
  EXPECT_EQ(*decoder.push(3186), " world");   // "▁world"
  decoder.reset();
  EXPECT_EQ(*decoder.push(3186), "world");
}

}  // namespace
}  // namespace lpx::test
