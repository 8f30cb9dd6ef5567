// Every shared vocabulary and the default model against golden/*.out: ids from make_goldens.py, a
// second implementation of llama.cpp's rules (Python `regex` with the original patterns, textbook
// merge loops). That script reproduces llama.cpp's own gpt-2 and llama-spm test outputs exactly.
#include <cctype>
#include <ostream>

#include <gtest/gtest.h>

#include "tokenizer_test_support.hpp"

namespace lpx::test {
namespace {

struct GoldenCase {
  std::string vocabulary;  // golden file stem
  bool parse_special;
};

void PrintTo(const GoldenCase& c, std::ostream* out) {
  *out << c.vocabulary << (c.parse_special ? " (parse_special)" : "");
}

std::string case_name(const ::testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.vocabulary + (info.param.parse_special ? "_special" : "_plain");
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

class ReferenceGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(ReferenceGolden, EncodesLikeTheReference) {
  const GoldenCase& c = GetParam();
  const std::filesystem::path path = c.vocabulary == "smollm2" ? smollm2_path() : vocab_path(c.vocabulary);
  if (c.vocabulary != "smollm2" && !std::filesystem::exists(shared_dir() / "vocab")) {
    GTEST_SKIP() << "no ../shared/vocab";
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing (the default model is installed by tools/setup.sh)";
  ModelOpener opener;
  auto loaded = opener.load(path);
  ASSERT_TRUE(loaded) << loaded.error();
  std::vector<std::string> strings = read_vocab_inputs(vocab_path("gpt-2").string() + ".inp");
  for (const std::string& s : extra_strings()) strings.push_back(s);
  const std::string golden = std::string(LPX_TOKENIZER_GOLDEN_DIR) + "/" + c.vocabulary +
                             (c.parse_special ? ".special.out" : ".out");
  const auto expected = read_vocab_outputs(golden);
  ASSERT_EQ(expected.size(), strings.size()) << golden;
  for (std::size_t i = 0; i < strings.size(); ++i) {
    auto ids = loaded->tokenizer->encode(
        strings[i], {.add_bos = false, .add_eos = false, .parse_special = c.parse_special});
    ASSERT_TRUE(ids) << ids.error();
    EXPECT_EQ(*ids, expected[i]) << c.vocabulary << " string " << i << ": '" << printable(strings[i])
                                 << "'";
  }
}

std::vector<GoldenCase> cases() {
  std::vector<GoldenCase> out;
  for (const char* name : {"deepseek-coder", "falcon", "gpt-2", "gpt-neox", "llama-spm", "mpt", "phi-3",
                           "refact", "starcoder", "smollm2"}) {
    out.push_back({name, false});
    out.push_back({name, true});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllVocabularies, ReferenceGolden, ::testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace lpx::test
