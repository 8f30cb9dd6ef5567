// `lpx-pipeline perplexity` against the Python reference (tools/make_perplexity_fixture.py): on
// the shared tiny llama and Debian's GPL-3 text, llama.cpp's arithmetic (LPX's q8 activations)
// gives the fixture's perplexity, and the float64 forward pass the f32 reference's; KL
// divergence and top-1 agreement follow. Also: both reference plugins agree bit for bit, a run
// against itself has KL 0, and a too-short text is a clear error.
#include <gtest/gtest.h>

#include <filesystem>

#include <boost/json.hpp>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

const std::string kTiny = std::string(LPX_SOURCE_DIR) + "/../shared/models/llama-2-tiny-random.gguf";
const std::string kFixture = std::string(LPX_SOURCE_DIR) + "/tests/fixtures/perplexity/tiny-llama-gpl3.json";

boost::json::object parse_object(const std::string& text) { return boost::json::parse(text).as_object(); }

double number(const boost::json::object& o, const char* key) { return o.at(key).to_number<double>(); }

CommandResult run_perplexity(const boost::json::object& fixture, std::vector<std::string> extra) {
  std::vector<std::string> args{"perplexity", "--model", kTiny, "--file",
                                std::string(fixture.at("text").as_string()), "--json",
                                "--ctx", std::to_string(fixture.at("ctx").as_int64()),
                                "--chunks", std::to_string(fixture.at("chunks").as_int64())};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_lpx(args);
}

class CliPerplexity : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture_ = parse_object(read_file(kFixture));
    const std::string text(fixture_.at("text").as_string());
    ASSERT_TRUE(std::filesystem::exists(text)) << text << " (Debian's base-files) is missing";
  }
  boost::json::object fixture_;
};

TEST_F(CliPerplexity, MatchesThePythonReference) {
  const CommandResult r = run_perplexity(fixture_, {"--option", "activations=q8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::object o = parse_object(r.out);
  EXPECT_EQ(o.at("text_tokens").as_int64(), fixture_.at("text_tokens").as_int64()) << "tokenizer or text differs";
  EXPECT_EQ(o.at("tokens").as_int64(), fixture_.at("tokens").as_int64());
  // q8 activations are llama.cpp's arithmetic bit for bit: the same perplexity to rounding.
  EXPECT_NEAR(number(o, "perplexity"), number(fixture_, "perplexity"), 1e-9 * number(fixture_, "perplexity"));
  // The f32 reference against a float64 forward pass.
  EXPECT_NEAR(number(o, "reference_perplexity"), number(fixture_, "reference_perplexity"),
              1e-7 * number(fixture_, "reference_perplexity"));
  EXPECT_NEAR(number(o, "kl_divergence"), number(fixture_, "kl_divergence"), 0.02 * number(fixture_, "kl_divergence"));
  EXPECT_GT(number(o, "kl_divergence"), 0.0) << "f16-rounded activations differ from f32 ones";
  EXPECT_EQ(number(o, "top1_agreement"), number(fixture_, "top1_agreement"));
}

TEST_F(CliPerplexity, BothReferencePluginsGiveTheSameBitsAndF32AgainstItselfHasNoDivergence) {
  const CommandResult cpu = run_perplexity(fixture_, {"--option", "activations=q8"});
  const CommandResult scalar = run_perplexity(fixture_, {"--option", "activations=q8", "--reference-backend", "cpu-scalar"});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  ASSERT_EQ(scalar.exit_code, 0) << scalar.err;
  const boost::json::object a = parse_object(cpu.out), b = parse_object(scalar.out);
  EXPECT_EQ(number(a, "reference_perplexity"), number(b, "reference_perplexity"));
  EXPECT_EQ(number(a, "kl_divergence"), number(b, "kl_divergence"));
  const CommandResult same = run_perplexity(fixture_, {"--option", "activations=f32"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const boost::json::object s = parse_object(same.out);
  EXPECT_EQ(number(s, "kl_divergence"), 0.0);
  EXPECT_EQ(number(s, "top1_agreement"), 1.0);
  EXPECT_EQ(number(s, "perplexity"), number(s, "reference_perplexity"));
}

TEST_F(CliPerplexity, ATextShorterThanAWindowIsAClearError) {
  TempDir dir;
  write_file(dir / "short.txt", "Only a few words.");
  const CommandResult r = run_lpx({"perplexity", "--model", kTiny, "--file", (dir / "short.txt").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("fewer than one window of 512"), std::string::npos) << r.err;
  const CommandResult missing = run_lpx({"perplexity", "--model", kTiny, "--file", (dir / "none.txt").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("none.txt"), std::string::npos) << missing.err;
}

TEST_F(CliPerplexity, TheTextReportNamesBothRuns) {
  const std::string text(fixture_.at("text").as_string());
  const CommandResult r = run_lpx({"perplexity", "--model", kTiny, "--file", text, "--ctx", "64", "--chunks", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("evaluated:       cpu (activations=i16, "), std::string::npos) << r.out;  // the default
  EXPECT_NE(r.out.find("reference:       cpu (activations=f32, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("positions scored"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("top-1 agreement:"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("[1/1] perplexity"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lpx::test
