// Version, usage errors and logging options of lpx-pipeline.
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

TEST(CliMisc, VersionNamesVersionCommitCompilerBackendsAndCpuKernels) {
  CommandResult r = run_lpx({"--version"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("lpx-pipeline 0.", 0), 0u) << r.out;
  for (const char* field : {"commit:", "compiler:", "plugin ABI:  " LPX_ABI_TEXT, "backends:",
                            "cuda:", "cpu:", "cpu kernels: "}) {
    EXPECT_NE(r.out.find(field), std::string::npos) << field << "\n" << r.out;
  }
  // The kernel set `cpu` picks here: always one that runs, so never "not runnable".
  const std::size_t kernels = r.out.find("cpu kernels: ");
  ASSERT_NE(kernels, std::string::npos);
  const std::string chosen = r.out.substr(kernels + 13, r.out.find('\n', kernels) - kernels - 13);
  EXPECT_TRUE(chosen == "avx512 (auto)" || chosen == "avx2 (auto)" || chosen == "portable (auto)") << chosen;
}

TEST(CliMisc, UsageErrorsExitTwo) {
  EXPECT_EQ(run_lpx({}).exit_code, 2);
  EXPECT_EQ(run_lpx({"no-such-command"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"run"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"--log-format", "xml", "plugins"}).exit_code, 2);
  CommandResult level = run_lpx({"--log-level", "loud", "plugins"});
  EXPECT_EQ(level.exit_code, 2);
  EXPECT_NE(level.err.find("unknown log level 'loud'"), std::string::npos);
}

TEST(CliMisc, QuantizeNamesTheTypesItTakesAndReportsWhatItWrote) {
  const std::filesystem::path tiny = std::filesystem::path(LPX_SOURCE_DIR) / ".." / "shared/models/llama-2-tiny-random.gguf";
  if (!std::filesystem::exists(tiny)) GTEST_SKIP() << "no ../shared/models";
  TempDir dir;
  const std::string out = (dir / "tiny-q8_0.gguf").string();
  CommandResult unknown = run_lpx({"quantize", tiny.string(), out, "--type", "Q3_K_M"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown type; types: F16, BF16, Q8_0"), std::string::npos) << unknown.err;
  CommandResult ok = run_lpx({"quantize", tiny.string(), out, "--type", "q8_0"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("100%"), std::string::npos) << "the progress reaches its end\n" << ok.err;
  EXPECT_NE(ok.err.find(out + ": Q8_0, 12 tensors (1 converted)"), std::string::npos) << ok.err;
  EXPECT_TRUE(std::filesystem::exists(out));
}

TEST(CliMisc, ConvertWritesAHuggingFaceDirectoryAsGguf) {
  const std::string hf = std::string(LPX_SOURCE_DIR) + "/tests/fixtures/hf/qwen2";
  TempDir dir;
  const std::string out = (dir / "qwen2.gguf").string();
  CommandResult ok = run_lpx({"convert", hf, "-o", out});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find(out + ": from safetensors (types kept), 39 tensors (0 converted)"), std::string::npos) << ok.err;
  CommandResult inspect = run_lpx({"inspect", out});
  ASSERT_EQ(inspect.exit_code, 0) << inspect.err;
  EXPECT_NE(inspect.out.find("architecture:   qwen2: 3 layers"), std::string::npos) << inspect.out;

  const std::string q8 = (dir / "qwen2-q8_0.gguf").string();
  CommandResult quantized = run_lpx({"convert", hf, "-o", q8, "--type", "Q8_0"});
  ASSERT_EQ(quantized.exit_code, 0) << quantized.err;
  EXPECT_NE(quantized.err.find("(Q8_0), 39 tensors (23 converted)"), std::string::npos) << quantized.err;
  // Quantized input is converted again only when asked.
  CommandResult again = run_lpx({"convert", q8, "-o", (dir / "again.gguf").string(), "--type", "Q4_0"});
  EXPECT_EQ(again.exit_code, 1);
  EXPECT_NE(again.err.find("is quantized already"), std::string::npos) << again.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "again.gguf"));

  EXPECT_EQ(run_lpx({"convert", hf, "-o", out, "--pure"}).exit_code, 2);
  EXPECT_EQ(run_lpx({"convert", hf, "-o", out, "--type", "Q3_K"}).exit_code, 2);
  CommandResult missing = run_lpx({"convert", (dir / "nothing").string(), "-o", out});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
}

TEST(CliMisc, QualityCountsEveryRunAndComparesTwoModels) {
  const std::string hf = std::string(LPX_SOURCE_DIR) + "/tests/fixtures/hf/llama";
  TempDir dir;
  const std::string q = (dir / "q8.gguf").string();
  ASSERT_EQ(run_lpx({"convert", hf, "-o", q, "--type", "Q8_0"}).exit_code, 0);
  CommandResult r = run_lpx({"quality", "--model", hf, "--compare", q, "--runs", "2", "--max-tokens", "16", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::value report = boost::json::parse(r.out);
  for (const char* key : {"runs", "empty", "bad_utf8", "special_leaks", "early_stops", "loops", "nondeterministic"}) {
    ASSERT_TRUE(report.as_object().contains(key)) << key;
  }
  EXPECT_EQ(report.at("runs").as_int64(), 8 * 2 * 2);  // 8 prompts, 2 greedy and 2 sampled runs each
  EXPECT_EQ(report.at("nondeterministic").as_int64(), 0);
  const auto& compare = report.at("compare");
  EXPECT_EQ(compare.at("runs").as_int64(), 32);
  EXPECT_EQ(compare.at("prompts_compared").as_int64(), 8);
  EXPECT_LE(compare.at("identical_greedy_answers").as_int64(), 8);
  EXPECT_GT(compare.at("kl_positions").as_int64(), 0);
  EXPECT_GE(compare.at("mean_kl").to_number<double>(), 0.0);
  EXPECT_GT(compare.at("top1_agreement").to_number<double>(), 0.5) << "Q8_0 mostly agrees with bf16";
  // A model against itself: no drift, no divergence.
  CommandResult same = run_lpx({"quality", "--model", hf, "--compare", hf, "--runs", "1", "--max-tokens", "16", "--json"});
  ASSERT_EQ(same.exit_code, 0) << same.err;
  const boost::json::value self = boost::json::parse(same.out);
  EXPECT_EQ(self.at("compare").at("identical_greedy_answers").as_int64(), 8);
  EXPECT_EQ(self.at("compare").at("mean_kl").to_number<double>(), 0.0);
  CommandResult table = run_lpx({"quality", "--model", hf, "--runs", "1", "--max-tokens", "8"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("| total | 16 |"), std::string::npos) << table.out;
  EXPECT_EQ(run_lpx({"quality", "--model", hf, "--runs", "0"}).exit_code, 2);
}

TEST(CliMisc, WritesJsonLogLinesToAFile) {
  TempDir dir;
  const auto pipeline = dir / "p.toml";
  write_file(pipeline, "[transport]\nplugin = \"test-transport\"\noutput = \"" +
                           (dir / "out.txt").string() + "\"\nmessage = \"quote \\\" and \\u00e9\"\n");
  const auto log = dir / "lpx.log";
  CommandResult r = run_lpx({"--log-level", "debug", "--log-format", "json", "--log-file",
                             log.string(), "run", pipeline.string()},
                            LPX_TEST_GOOD_PLUGIN_DIR);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(read_file(log));
  std::string line;
  size_t count = 0;
  bool saw_plugin_line = false;
  while (std::getline(lines, line)) {
    const boost::json::value entry = boost::json::parse(line);  // throws on a malformed line
    EXPECT_TRUE(entry.as_object().contains("time"));
    EXPECT_TRUE(entry.as_object().contains("level"));
    const std::string message(entry.at("message").as_string());
    saw_plugin_line = saw_plugin_line || message.rfind("test-transport: writing ", 0) == 0;
    ++count;
  }
  EXPECT_GE(count, 2u);
  EXPECT_TRUE(saw_plugin_line) << "plugin logs go through the host, prefixed with its name";
}

}  // namespace
}  // namespace lpx::test
