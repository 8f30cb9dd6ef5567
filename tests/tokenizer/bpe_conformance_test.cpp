// Byte-level BPE vocabularies ("gpt2"): token-exact with llama.cpp's test data, every shared
// vocabulary loads and round-trips.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

using core::Tokenizer;

class BpeConformance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(shared_dir() / "vocab")) GTEST_SKIP() << "no ../shared/vocab";
  }
  ModelOpener opener;
};

TEST_F(BpeConformance, Gpt2MatchesLlamaCppTokenForToken) {
  auto loaded = opener.load(vocab_path("gpt-2"));
  ASSERT_TRUE(loaded) << loaded.error();
  const auto inputs = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
  const auto outputs = read_vocab_outputs(vocab_path("gpt-2").string() + ".out");
  ASSERT_EQ(inputs.size(), 46u);
  ASSERT_EQ(outputs.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    auto ids = loaded->tokenizer->encode(inputs[i], {.add_bos = false, .add_eos = false});
    ASSERT_TRUE(ids) << ids.error();
    EXPECT_EQ(*ids, outputs[i]) << "string " << i << ": '" << printable(inputs[i]) << "'";
  }
}

TEST_F(BpeConformance, EverySharedVocabularyLoadsAndRoundTrips) {
  const auto names = shared_vocab_names();
  ASSERT_GE(names.size(), 9u);  // 7 gpt2 + 2 llama vocabularies
  std::vector<std::string> strings = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
  for (const std::string& s : extra_strings()) strings.push_back(s);
  for (const std::string& name : names) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    const Tokenizer& tokenizer = *loaded->tokenizer;
    EXPECT_GT(tokenizer.vocab_size(), 30000) << name;
    for (const std::string& s : strings) {
      auto ids = tokenizer.encode(s, {.add_bos = false, .add_eos = false});
      ASSERT_TRUE(ids) << name << ": " << ids.error();
      auto text = tokenizer.decode(*ids);
      ASSERT_TRUE(text) << text.error();
      // Byte-level BPE and byte-fallback SPM lose nothing (but SPM's own space mark U+2581);
      // SPM's space prefix is dropped again.
      EXPECT_EQ(*text, expected_round_trip(tokenizer, s)) << name << ": '" << printable(s) << "'";
    }
  }
}

TEST_F(BpeConformance, PreTokenizersAreTheOnesTheFilesName) {
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"deepseek-coder", "deepseek-coder"}, {"falcon", "falcon"}, {"gpt-2", "gpt-2"},
      {"gpt-neox", "default"},  // the file has no tokenizer.ggml.pre: llama.cpp's default
      {"mpt", "mpt"}, {"refact", "refact"}, {"starcoder", "starcoder"}};
  for (const auto& [name, pre] : expected) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    EXPECT_EQ(loaded->tokenizer->vocabulary().pre, pre) << name;
    EXPECT_EQ(loaded->tokenizer->vocabulary().model, core::TokenizerModel::bpe) << name;
  }
}

TEST_F(BpeConformance, OneTokenizerServesManyThreadsAtOnce) {
  for (const std::string name : {"gpt-2", "llama-spm", "gpt-neox"}) {
    auto loaded = opener.load(vocab_path(name));
    ASSERT_TRUE(loaded) << loaded.error();
    const Tokenizer& tokenizer = *loaded->tokenizer;
    std::vector<std::string> strings = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
    for (const std::string& s : extra_strings()) strings.push_back(s);
    std::vector<std::vector<std::int32_t>> expected;
    for (const std::string& s : strings) expected.push_back(*tokenizer.encode(s, {.parse_special = true}));
    std::atomic<int> mismatches{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int round = 0; round < 10; ++round) {
          for (std::size_t i = 0; i < strings.size(); ++i) {
            const std::size_t k = (i + static_cast<std::size_t>(t) * 7) % strings.size();
            auto ids = tokenizer.encode(strings[k], {.parse_special = true});
            if (!ids || *ids != expected[k]) ++mismatches;
            auto text = tokenizer.decode(expected[k], true);
            if (!text) ++mismatches;
          }
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(mismatches.load(), 0) << name;
  }
}

}  // namespace
}  // namespace lpx::test
