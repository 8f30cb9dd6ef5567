// The real Qwen2 and Llama 3 vocabularies, token-exact against llama.cpp.
//
// tools/setup.sh builds models/vocab-qwen2.gguf (pre-tokenizer "qwen2": Qwen2, Qwen2.5, Qwen3)
// and models/vocab-llama-bpe.gguf ("llama-bpe": Llama 3, 3.1, 3.2) with tools/make_vocab_gguf.py
// from the tiktoken ranks in the PyPI packages dashscope 2.0.2 (qwen.tiktoken) and llama-models
// 0.3.0 (llama3/tokenizer.model). The expected ids in golden/peer/ are llama.cpp's for those files
// (tools/make_real_vocab_fixtures.py, run with the peer of docs/peers.md), for llama.cpp's
// vocabulary test strings, golden/extra.inp and golden/peer/hard-cases.inp. A missing vocabulary
// fails in CI (CI=true) and is skipped elsewhere.
#include <map>
#include <mutex>

#include <gtest/gtest.h>

#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

using core::TokenType;
using Ids = std::vector<std::int32_t>;

const std::filesystem::path kPeerDir = std::filesystem::path(LPX_TOKENIZER_GOLDEN_DIR) / "peer";

// One load per vocabulary for the whole program (280,147 merges take a moment).
const LoadedTokenizer* load_once(const std::string& name, std::string& error) {
  static std::mutex mutex;
  static ModelOpener opener;
  static std::map<std::string, LoadedTokenizer> loaded;
  static std::map<std::string, std::string> errors;
  std::lock_guard lock(mutex);
  if (auto it = loaded.find(name); it != loaded.end()) return &it->second;
  if (auto it = errors.find(name); it != errors.end()) {
    error = it->second;
    return nullptr;
  }
  auto result = opener.load(real_vocab_path(name));
  if (!result) {
    error = errors[name] = result.error().message;
    return nullptr;
  }
  return &loaded.emplace(name, std::move(*result)).first->second;
}

// The test strings, in the fixtures' order.
std::vector<std::string> test_strings() {
  std::vector<std::string> strings = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
  for (const std::string& s : extra_strings()) strings.push_back(s);
  for (const std::string& s : read_vocab_inputs(kPeerDir / "hard-cases.inp")) strings.push_back(s);
  return strings;
}

class RealVocabulary : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const std::filesystem::path path = real_vocab_path(GetParam());
    const std::filesystem::path inputs = vocab_path("gpt-2").string() + ".inp";
    for (const auto& needed : {path, inputs}) {
      if (std::filesystem::exists(needed)) continue;
      const std::string why = needed.string() + " is missing (" +
                              (needed == path ? "tools/setup.sh builds it from PyPI packages"
                                              : "llama.cpp's test strings, in ../shared") + ")";
      if (running_in_ci()) GTEST_FAIL() << why;
      GTEST_SKIP() << why;
    }
    std::string error;
    loaded_ = load_once(GetParam(), error);
    ASSERT_NE(loaded_, nullptr) << error;
    strings_ = test_strings();
    ASSERT_EQ(strings_.size(), 175u);
  }

  const core::Tokenizer& tokenizer() const { return *loaded_->tokenizer; }

  // The peer's ids for every string, from golden/peer/NAME.SUFFIX.
  std::vector<Ids> expected(const std::string& suffix) const {
    auto rows = read_vocab_outputs(kPeerDir / (GetParam() + "." + suffix));
    EXPECT_EQ(rows.size(), strings_.size()) << GetParam() << "." << suffix;
    rows.resize(strings_.size());
    return rows;
  }

  void expect_like_peer(const std::string& suffix, core::Tokenizer::EncodeOptions options) const {
    const std::vector<Ids> want = expected(suffix);
    for (std::size_t i = 0; i < strings_.size(); ++i) {
      auto ids = tokenizer().encode(strings_[i], options);
      ASSERT_TRUE(ids) << ids.error();
      EXPECT_EQ(*ids, want[i]) << GetParam() << " string " << i << ": '" << printable(strings_[i]) << "'";
    }
  }

  const LoadedTokenizer* loaded_ = nullptr;
  std::vector<std::string> strings_;
};

TEST_P(RealVocabulary, DescribesTheReleasedVocabulary) {
  const core::Vocabulary& v = tokenizer().vocabulary();
  EXPECT_EQ(v.model, core::TokenizerModel::bpe);
  EXPECT_EQ(v.pre, GetParam());
  EXPECT_FALSE(v.add_eos);
  if (GetParam() == "qwen2") {
    EXPECT_EQ(tokenizer().vocab_size(), 151936);
    EXPECT_EQ(v.merges.size(), 151387u);
    EXPECT_FALSE(v.add_bos);
    EXPECT_EQ(tokenizer().bos(), 151643);  // <|endoftext|>
    EXPECT_EQ(tokenizer().eos(), 151645);  // <|im_end|>
    EXPECT_EQ(tokenizer().eot(), 151645);
    EXPECT_EQ(v.tokens[151644], "<|im_start|>");
    EXPECT_EQ(v.types[151644], TokenType::control);
    EXPECT_EQ(v.tokens[151667], "<think>");
    EXPECT_EQ(v.types[151667], TokenType::user_defined);
    EXPECT_EQ(v.types[151700], TokenType::unused);
    EXPECT_TRUE(tokenizer().is_end_of_generation(151643));
    EXPECT_TRUE(tokenizer().is_end_of_generation(151662));  // <|fim_pad|>
    EXPECT_FALSE(tokenizer().is_end_of_generation(151644));
    EXPECT_EQ(*tokenizer().encode("Hello world"), (Ids{9707, 1879}));
  } else {
    EXPECT_EQ(tokenizer().vocab_size(), 128256);
    EXPECT_EQ(v.merges.size(), 280147u);
    EXPECT_TRUE(v.add_bos);
    EXPECT_EQ(tokenizer().bos(), 128000);  // <|begin_of_text|>
    EXPECT_EQ(tokenizer().eos(), 128009);  // <|eot_id|>
    EXPECT_EQ(tokenizer().eot(), 128009);
    EXPECT_EQ(v.tokens[128006], "<|start_header_id|>");
    EXPECT_EQ(v.types[128006], TokenType::control);
    EXPECT_TRUE(tokenizer().is_end_of_generation(128001));  // <|end_of_text|>
    EXPECT_TRUE(tokenizer().is_end_of_generation(128008));  // <|eom_id|>
    EXPECT_FALSE(tokenizer().is_end_of_generation(128006));
    EXPECT_EQ(*tokenizer().encode("Hello world"), (Ids{128000, 9906, 1917}));
  }
}

TEST_P(RealVocabulary, EncodesLikeLlamaCpp) {
  expect_like_peer("out", {.add_bos = false, .add_eos = false, .parse_special = false});
}

TEST_P(RealVocabulary, ParsesSpecialTokensLikeLlamaCpp) {
  expect_like_peer("special.out", {.add_bos = false, .add_eos = false, .parse_special = true});
}

TEST_P(RealVocabulary, AddsBosLikeLlamaCpp) {
  expect_like_peer("bos.out", {});  // BOS as the file says: Llama 3 yes, Qwen no
}

TEST_P(RealVocabulary, DecodesTheIdsBackToTheText) {
  const std::vector<Ids> plain = expected("out");
  const std::vector<Ids> special = expected("special.out");
  for (std::size_t i = 0; i < strings_.size(); ++i) {
    const std::string& s = strings_[i];
    EXPECT_EQ(*tokenizer().decode(plain[i]), s) << GetParam() << " string " << i << ": '" << printable(s) << "'";
    EXPECT_EQ(*tokenizer().decode(special[i], /*render_special=*/true), s) << GetParam() << " string " << i;
    core::IncrementalDecoder stream(tokenizer(), /*render_special=*/true);
    std::string streamed;
    for (const std::int32_t id : special[i]) streamed += *stream.push(id);
    streamed += stream.flush();
    EXPECT_EQ(streamed, s) << GetParam() << " string " << i;
  }
}

std::string case_name(const ::testing::TestParamInfo<std::string>& param) {
  return param.param == "qwen2" ? "qwen2" : "llama_bpe";
}

INSTANTIATE_TEST_SUITE_P(QwenAndLlama3, RealVocabulary, ::testing::Values("qwen2", "llama-bpe"), case_name);

}  // namespace
}  // namespace lpx::test
