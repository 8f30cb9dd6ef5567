// [model] quantize / --quantize: the tensors a model holds after quantizing as it loads are, byte
// for byte, those `convert --type` writes; its memory estimate is their size; a quantized model
// is refused rather than quantized twice; and the CLI's answer equals the converted file's.
#include <gtest/gtest.h>

#include <cstring>

#include "engine/engine_test_support.hpp"
#include "model/model_file.hpp"
#include "quantize/convert_model.hpp"
#include "quantize/quantize_on_load.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& family) {
  return fs::path(LPX_SOURCE_DIR) / "tests/fixtures/hf" / family;
}

TEST(QuantizeOnLoad, HoldsTheTensorsConvertWrites) {
  TestHost host;
  TempDir dir;
  for (const char* family : {"llama", "qwen3", "gemma3"}) {
    for (const core::QuantMix mix : {core::QuantMix::Q4_K_M, core::QuantMix::Q8_0}) {
      auto loaded = core::ModelFile::open(fixture(family).string(), host.registry());
      ASSERT_TRUE(loaded) << loaded.error();
      auto expected_bytes = core::quantized_tensor_bytes(**loaded, mix);
      ASSERT_TRUE(expected_bytes) << expected_bytes.error();
      auto summary = core::quantize_on_load(**loaded, mix);
      ASSERT_TRUE(summary) << summary.error();
      EXPECT_GT(summary->converted, 0u);
      EXPECT_EQ(summary->output_bytes, *expected_bytes);

      const std::string out = (dir / "converted.gguf").string();
      auto source = core::ModelFile::open(fixture(family).string(), host.registry());
      ASSERT_TRUE(source);
      core::ConvertOptions options;
      options.mix = mix;
      ASSERT_TRUE(core::convert_model(**source, out, options));
      auto converted = core::ModelFile::open(out, host.registry());
      ASSERT_TRUE(converted) << converted.error();
      std::uint64_t held = 0;
      for (const lpx_tensor_view& t : loaded.value()->tensors()) {
        const lpx_tensor_view* c = converted.value()->find_tensor(t.name);
        ASSERT_NE(c, nullptr) << t.name;
        EXPECT_EQ(t.type, c->type) << family << " " << t.name;
        ASSERT_EQ(t.size_bytes, c->size_bytes) << family << " " << t.name;
        EXPECT_EQ(std::memcmp(t.data, c->data, t.size_bytes), 0) << family << " " << t.name;
        held += t.size_bytes;
      }
      EXPECT_EQ(held, *expected_bytes);
    }
  }
}

TEST(QuantizeOnLoad, RefusesAQuantizedModel) {
  TestHost host;
  TempDir dir;
  auto source = core::ModelFile::open(fixture("llama").string(), host.registry());
  ASSERT_TRUE(source);
  const std::string q8 = (dir / "q8.gguf").string();
  core::ConvertOptions options;
  options.mix = core::QuantMix::Q8_0;
  ASSERT_TRUE(core::convert_model(**source, q8, options));
  auto quantized = core::ModelFile::open(q8, host.registry());
  ASSERT_TRUE(quantized);
  auto again = core::quantize_on_load(**quantized, core::QuantMix::Q4_0);
  ASSERT_FALSE(again);
  EXPECT_NE(again.error().message.find("is q8_0 already; quantize on load takes F32, F16 and BF16 models"),
            std::string::npos) << again.error();
}

TEST(QuantizeOnLoad, GenerateAnswersAsTheConvertedFileDoes) {
  TempDir dir;
  const std::string hf = fixture("qwen2").string();
  const std::string q = (dir / "q4_k_m.gguf").string();
  ASSERT_EQ(run_lpx({"convert", hf, "-o", q, "--type", "Q4_K_M"}).exit_code, 0);
  const std::vector<std::string> common = {"--prompt", "Hello, world!", "--max-tokens", "12", "--temperature", "0",
                                           "--ids", "--device", "cpu"};
  std::vector<std::string> on_load = {"generate", "--model", hf, "--quantize", "q4_k_m"};
  std::vector<std::string> from_file = {"generate", "--model", q};
  on_load.insert(on_load.end(), common.begin(), common.end());
  from_file.insert(from_file.end(), common.begin(), common.end());
  CommandResult a = run_lpx(on_load);
  CommandResult b = run_lpx(from_file);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_NE(a.err.find("quantized to Q4_K_M as it loaded"), std::string::npos) << a.err;
  CommandResult bad = run_lpx({"generate", "--model", hf, "--prompt", "x", "--quantize", "Q3_K"});
  EXPECT_EQ(bad.exit_code, 2);
}

TEST(QuantizeOnLoad, PipelinesAskForItInTheirModelTable) {
  TempDir dir;
  const std::string hf = fixture("gemma3").string();
  write_file(dir / "in.jsonl", "{\"prompt\": \"Hello\", \"max_tokens\": 3}\n");
  CommandResult ok = run_lpx({"batch", "--model", hf, "--input", (dir / "in.jsonl").string(), "--run-dir",
                              (dir / "run").string(), "--context", "64", "--quantize", "Q8_0"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("quantized to Q8_0 as it loaded"), std::string::npos) << ok.err;

  write_file(dir / "p.toml", "[model]\nplugin = \"safetensors\"\npath = \"" + hf +
                                 "\"\nquantize = \"Q3_K\"\n[transport]\nplugin = \"stdio\"\n");
  CommandResult bad = run_lpx({"run", (dir / "p.toml").string()});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("Q4_K_M"), std::string::npos) << "the error lists the choices\n" << bad.err;
}

}  // namespace
}  // namespace lpx::test
