// `lpx-pipeline tokenize`: the ids as one JSON array; BOS as the model says unless --no-bos;
// special-token text is plain text unless --parse-special.
#include <gtest/gtest.h>

#include <filesystem>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

const std::string kLlama2 = std::string(LPX_SOURCE_DIR) + "/../shared/models/llama-2-tiny-random.gguf";
const std::string kSmol = std::string(LPX_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";

TEST(CliTokenize, AddsBosWhenTheModelSaysSo) {
  ASSERT_TRUE(std::filesystem::exists(kLlama2)) << kLlama2 << " is missing (../shared test data)";
  // Llama-2's SentencePiece ids for "Hello world", as in the shared vocabulary tests.
  CommandResult with_bos = run_lpx({"tokenize", "--model", kLlama2, "--text", "Hello world"});
  ASSERT_EQ(with_bos.exit_code, 0) << with_bos.err;
  EXPECT_EQ(with_bos.out, "[1, 15043, 3186]\n");
  CommandResult no_bos = run_lpx({"tokenize", "--model", kLlama2, "--text", "Hello world", "--no-bos"});
  EXPECT_EQ(no_bos.out, "[15043, 3186]\n");
}

TEST(CliTokenize, SpecialTokenTextIsPlainUnlessAsked) {
  ASSERT_TRUE(std::filesystem::exists(kSmol)) << kSmol << " is missing: run tools/setup.sh";
  CommandResult plain = run_lpx({"tokenize", "--model", kSmol, "--text", "<|im_start|>"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out, "[1]\n");
  EXPECT_GT(plain.out.size(), 4u) << "several ordinary tokens";
  CommandResult special =
      run_lpx({"tokenize", "--model", kSmol, "--text", "<|im_start|>", "--parse-special"});
  ASSERT_EQ(special.exit_code, 0) << special.err;
  EXPECT_EQ(special.out, "[1]\n") << "<|im_start|> is token 1 in SmolLM2";
}

TEST(CliTokenize, ReadsAFileAndRejectsBadUsage) {
  TempDir dir;
  write_file(dir / "in.txt", "Hello world");
  CommandResult r = run_lpx({"tokenize", "--model", kLlama2, "--file", (dir / "in.txt").string()});
  EXPECT_EQ(r.out, "[1, 15043, 3186]\n") << r.err;
  EXPECT_EQ(run_lpx({"tokenize", "--model", kLlama2}).exit_code, 2);
  EXPECT_EQ(run_lpx({"tokenize", "--text", "x"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"tokenize", "--model", kLlama2, "--text", "a", "--file", "b"}).exit_code, 2);
  CommandResult missing = run_lpx({"tokenize", "--model", (dir / "none.gguf").string(), "--text", "x"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err.rfind("error: " + (dir / "none.gguf").string() + ": ", 0), 0u) << missing.err;
}

}  // namespace
}  // namespace lpx::test
