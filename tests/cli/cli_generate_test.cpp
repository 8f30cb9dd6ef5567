// `lpx-pipeline generate`: one completion; --ids prints the generated ids as one JSON array;
// --temperature 0 is greedy (the peer's fixture tokens); --device never falls back silently.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

const std::string kSmol = std::string(LPX_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

// The first prompt of the SmolLM2 fixture and its first `n` greedy tokens, as a JSON array.
std::pair<std::string, std::string> fixture_prompt(std::size_t n) {
  std::ifstream in(std::string(LPX_SOURCE_DIR) + "/tests/fixtures/greedy/smollm2-135m-instruct-q4_1.json");
  std::stringstream text;
  text << in.rdbuf();
  const boost::json::value root = boost::json::parse(text.str());
  const auto& p = root.at("prompts").as_array().at(1);
  std::string ids = "[";
  const auto& generated = p.at("generated_ids").as_array();
  for (std::size_t i = 0; i < n; ++i) {
    ids += (i ? ", " : "") + std::to_string(generated.at(i).to_number<std::int64_t>());
  }
  return {boost::json::value_to<std::string>(p.at("prompt")), ids + "]\n"};
}

TEST(CliGenerate, GreedyIdsAreThePeersTokens) {
  ASSERT_TRUE(std::filesystem::exists(kSmol)) << "run tools/setup.sh";
  const auto [prompt, expected] = fixture_prompt(12);
  CommandResult r = run_lpx({"generate", "--model", kSmol, "--prompt", prompt, "--max-tokens",
                             "12", "--temperature", "0", "--device", "cpu", "--ids"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, expected);
}

TEST(CliGenerate, PrintsTheTextAndReadsPromptFiles) {
  TempDir dir;
  const auto [prompt, ids] = fixture_prompt(1);
  write_file(dir / "prompt.txt", prompt);
  CommandResult text = run_lpx({"generate", "--model", kSmol, "--prompt-file",
                                (dir / "prompt.txt").string(), "--max-tokens", "16",
                                "--temperature", "0"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.out, " the Roman Empire was formed in 753 BC. The Roman Empire was\n");
}

TEST(CliGenerate, TheSameSeedGivesTheSameText) {
  auto run = [&](const char* seed) {
    return run_lpx({"generate", "--model", kSmol, "--prompt", "Once upon a time", "--max-tokens",
                    "24", "--temperature", "1.0", "--seed", seed, "--ids"});
  };
  CommandResult a = run("5"), b = run("5");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

// Where CUDA cannot run (CI: no driver, no GPU) --device cuda fails at once and says why:
// never a silent CPU run. On a GPU machine cuda_engine_tests cover the other side.
TEST(CliGenerate, AskingForCudaWhereItCannotRunIsAnError) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  for (const char* device : {"cuda", "cuda:1"}) {
    CommandResult r = run_lpx({"generate", "--model", kSmol, "--prompt", "Hi", "--device", device});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(std::string("--device ") + device + ": "), std::string::npos) << r.err;
    EXPECT_TRUE(r.err.find("CUDA is not usable") != std::string::npos ||
                r.err.find("no CUDA backend plugin") != std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// auto takes the CPU where CUDA cannot run, and says so and why.
TEST(CliGenerate, DeviceAutoSaysWhatItChoseAndWhy) {
  if (std::filesystem::exists("/dev/nvidiactl")) GTEST_SKIP() << "this machine has an NVIDIA GPU";
  CommandResult r = run_lpx({"--log-level", "info", "generate", "--model", kSmol, "--prompt", "Hi",
                             "--max-tokens", "2", "--device", "auto"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("device auto: using cpu ("), std::string::npos) << r.err;
}

TEST(CliGenerate, BadUsageIsExitTwo) {
  EXPECT_EQ(run_lpx({"generate", "--model", kSmol}).exit_code, 2);  // no prompt
  EXPECT_EQ(run_lpx({"generate", "--model", kSmol, "--prompt", "a", "--device", "tpu"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"generate", "--model", kSmol, "--prompt", "a", "--prompt-file", "b"}).exit_code, 2);
}

// --draft-model alone means --speculative draft; the answer is the plain one, and a model
// drafting for itself guesses every greedy token. Contradicting flags are usage errors.
TEST(CliGenerate, ADraftModelSpeculatesWithoutChangingTheAnswer) {
  ASSERT_TRUE(std::filesystem::exists(kSmol)) << "run tools/setup.sh";
  const auto [prompt, expected] = fixture_prompt(12);
  for (std::vector<std::string> flags : {std::vector<std::string>{"--draft-model", kSmol},
                                         {"--speculative", "draft", "--draft-model", kSmol},
                                         {"--speculative", "ngram"}}) {
    std::vector<std::string> args = {"generate", "--model", kSmol, "--prompt", prompt, "--max-tokens",
                                     "12", "--temperature", "0", "--device", "cpu", "--ids"};
    args.insert(args.end(), flags.begin(), flags.end());
    CommandResult r = run_lpx(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, expected) << flags.front();
  }
  CommandResult missing = run_lpx({"generate", "--model", kSmol, "--prompt", "a", "--speculative", "draft"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--speculative draft needs --draft-model FILE"), std::string::npos) << missing.err;
  CommandResult both = run_lpx({"generate", "--model", kSmol, "--prompt", "a", "--speculative", "ngram",
                                "--draft-model", kSmol});
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("--draft-model is used with --speculative draft, not ngram"), std::string::npos)
      << both.err;
}

TEST(CliGenerate, APromptTooLongForTheContextIsRefused) {
  CommandResult r = run_lpx({"generate", "--model", kSmol, "--prompt",
                             "one two three four five six seven eight", "--context", "8"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the context holds 8"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lpx::test
