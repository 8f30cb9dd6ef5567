// `lpx-pipeline inspect FILE`: exit 0 and a summary for a valid model; exit 1 and one line
// "error: FILE: ..." for every broken one, never a crash; exit 2 for usage errors.
#include <gtest/gtest.h>

#include <filesystem>

#include "formats/malformed_gguf_cases.hpp"
#include "formats/tiny_llama.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

bool is_one_line(const std::string& text) {
  return !text.empty() && text.back() == '\n' && text.find('\n') == text.size() - 1;
}

TEST(CliInspect, SummarisesAValidModel) {
  TempDir dir;
  const std::string path = (dir / "tiny.gguf").string();
  TinyLlama{}.builder().write(path);
  CommandResult r = run_lpx({"inspect", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("format:         gguf"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("architecture:   llama: 2 layers, embedding 64, feed-forward 96, heads 4 (kv 2), head dim 16"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tensors:        21 (f32 21)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer:      llama, 40 tokens"), std::string::npos) << r.out;
}

TEST(CliInspect, SummarisesTheSharedTinyLlamaAndTheDefaultModel) {
  const std::string shared = std::string(LPX_SOURCE_DIR) + "/../shared/models/llama-2-tiny-random.gguf";
  ASSERT_TRUE(std::filesystem::exists(shared)) << shared << " is missing (../shared test data)";
  CommandResult tiny = run_lpx({"inspect", shared});
  EXPECT_EQ(tiny.exit_code, 0) << tiny.err;
  EXPECT_NE(tiny.out.find("tokenizer:      llama, 32000 tokens"), std::string::npos) << tiny.out;

  const std::string smol = std::string(LPX_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  ASSERT_TRUE(std::filesystem::exists(smol)) << smol << " is missing: run tools/setup.sh";
  CommandResult r = run_lpx({"inspect", smol});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("llama: 30 layers, embedding 576, feed-forward 1536, heads 9 (kv 3), head dim 64"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tensors:        272 (f32 61, q4_1 210, q8_0 1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tokenizer:      gpt2, pre 'smollm', 49152 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("output head tied to the embedding"), std::string::npos) << r.out;
}

TEST(CliInspect, EveryMalformedFileExitsOneWithOneClearLine) {
  TempDir dir;
  for (const MalformedGguf& c : malformed_gguf_cases()) {
    const std::string path = (dir / (std::string(c.name) + ".gguf")).string();
    const std::vector<std::uint8_t> bytes = c.make();
    write_file(path, std::string(bytes.begin(), bytes.end()));
    CommandResult r = run_lpx({"inspect", path});
    EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: " + path + ": ", 0), 0u) << c.name << ": " << r.err;
    EXPECT_TRUE(is_one_line(r.err)) << c.name << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << c.name;
  }
}

TEST(CliInspect, AnInconsistentModelExitsOne) {
  TempDir dir;
  const std::string path = (dir / "bad.gguf").string();
  TinyLlama model;
  model.n_head_kv = 3;
  model.builder().write(path);
  CommandResult r = run_lpx({"inspect", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "error: " + path +
                       ": llama.attention.head_count 4 is not a multiple of "
                       "llama.attention.head_count_kv 3\n");
}

// A well-formed file of an architecture this build does not run is summarised, exit 0, with
// the reason; only malformed files are errors.
TEST(CliInspect, AWellFormedFileOfAnUnsupportedArchitectureIsSummarised) {
  const std::string falcon = std::string(LPX_SOURCE_DIR) + "/../shared/vocab/ggml-vocab-falcon.gguf";
  if (!std::filesystem::exists(falcon)) GTEST_SKIP() << falcon << " is missing (../shared test data)";
  CommandResult r = run_lpx({"inspect", falcon});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("architecture:   falcon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("65024 tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs here:      no: architecture 'falcon' is not supported (supported: "),
            std::string::npos)
      << r.out;
}

TEST(CliInspect, MissingFilesAndUsageErrors) {
  TempDir dir;
  const std::string absent = (dir / "absent.gguf").string();
  CommandResult missing = run_lpx({"inspect", absent});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(missing.err, "error: " + absent + ": no such file\n");
  EXPECT_EQ(run_lpx({"inspect"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"inspect", "a.gguf", "b.gguf"}).exit_code, 2);
}

}  // namespace
}  // namespace lpx::test
