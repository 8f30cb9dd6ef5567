// quantize_model writes the files llama-quantize writes, byte for byte (tests/fixtures/quantize/
// files.json, from tools/make_quantize_file_fixtures.py): the shared tiny Llama to every type
// name with and without --pure, and the default SmolLM2 through F16 (dequantized from its Q4_1,
// the round trip) to every type name. And it refuses what it should, leaving nothing behind.
#include "quantize/quantize_model.hpp"

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "engine/engine_test_support.hpp"
#include "quantize/gguf_writer.hpp"
#include "util/sha256.hpp"
#include "support/test_support.hpp"

namespace lpx::core {
namespace {

std::string sha256_file(const std::filesystem::path& path) { return *core::sha256_file(path.string()); }

boost::json::object fixture() {
  std::ifstream in(std::filesystem::path(LPX_SOURCE_DIR) / "tests/fixtures/quantize/files.json");
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str()).as_object();
}

QuantizeOptions options_for(const std::string& label, bool allow_requantize = false) {
  QuantizeOptions o;
  o.mix = *parse_quant_mix(label.substr(0, label.find(' ')));
  o.pure = label.find(" --pure") != std::string::npos;
  o.allow_requantize = allow_requantize;
  return o;
}

TEST(QuantizeModel, TheTinyLlamaToEveryTypeIsLlamaQuantizesFile) {
  if (!std::filesystem::exists(test::tiny_llama_path())) GTEST_SKIP() << "no ../shared/models";
  test::TempDir dir;
  const auto out = dir / "out.gguf";
  const boost::json::object expected = fixture();
  for (const auto& [label, hash] : expected.at("tiny-llama").as_object()) {
    auto done = quantize_model(test::tiny_llama_path().string(), out.string(), options_for(std::string(label)));
    ASSERT_TRUE(done) << label << ": " << done.error();
    EXPECT_EQ(sha256_file(out), hash.as_string()) << label;
  }
}

TEST(QuantizeModel, SmolLM2ThroughF16ToEveryTypeIsLlamaQuantizesFile) {
  if (!std::filesystem::exists(test::smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  test::TempDir dir;
  const auto f16 = dir / "smollm2-f16.gguf", out = dir / "out.gguf";
  const boost::json::object all = fixture();
  const auto& expected = all.at("smollm2-f16").as_object();
  auto dequantized = quantize_model(test::smollm2_path().string(), f16.string(), options_for("F16", true));
  ASSERT_TRUE(dequantized) << dequantized.error();
  ASSERT_EQ(sha256_file(f16), expected.at("(the F16 input)").as_string());
  for (const auto& [label, hash] : expected) {
    if (label == "(the F16 input)") continue;
    QuantizeOptions options = options_for(std::string(label));
    options.threads = 2;
    auto done = quantize_model(f16.string(), out.string(), options);
    ASSERT_TRUE(done) << label << ": " << done.error();
    EXPECT_EQ(sha256_file(out), hash.as_string()) << label;
  }
}

TEST(QuantizeModel, QuantizedTensorsAreRequantizedOnlyWhenAllowed) {
  if (!std::filesystem::exists(test::smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  test::TempDir dir;
  const auto out = dir / "out.gguf";
  auto refused = quantize_model(test::smollm2_path().string(), out.string(), options_for("Q4_K_M"));
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("is q4_1 already"), std::string::npos) << refused.error();
  EXPECT_NE(refused.error().message.find("--allow-requantize"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(dir / "out.gguf.partial"));
}

TEST(QuantizeModel, BadInputsAreClearErrorsAndLeaveNothing) {
  test::TempDir dir;
  const auto out = dir / "out.gguf";
  EXPECT_EQ(quantize_model((dir / "missing.gguf").string(), out.string(), options_for("Q8_0")).error().code,
            LPX_ERR_NOT_FOUND);
  test::write_file(dir / "junk.gguf", "not a model at all");
  auto junk = quantize_model((dir / "junk.gguf").string(), out.string(), options_for("Q8_0"));
  ASSERT_FALSE(junk);
  EXPECT_NE(junk.error().message.find("not a GGUF file"), std::string::npos) << junk.error();
  if (std::filesystem::exists(test::tiny_llama_path())) {
    // Cut in the middle of its tensor data: the header says more than the file holds.
    std::ifstream in(test::tiny_llama_path(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    test::write_file(dir / "cut.gguf", bytes.substr(0, bytes.size() / 2));
    auto cut = quantize_model((dir / "cut.gguf").string(), out.string(), options_for("Q8_0"));
    ASSERT_FALSE(cut);
    EXPECT_NE(cut.error().message.find("past the end of the file"), std::string::npos) << cut.error();
    EXPECT_NE(cut.error().message.find("cut.gguf"), std::string::npos);
    auto same = quantize_model(test::tiny_llama_path().string(), test::tiny_llama_path().string(), options_for("Q8_0"));
    ASSERT_FALSE(same);
    EXPECT_NE(same.error().message.find("overwrite the input"), std::string::npos);
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

// A small F32 "llama" file: one 64 x 2 ffn_down matrix of `value`s, the metadata as given.
std::string small_model(const std::filesystem::path& dir, const std::string& name, float value,
                        bool with_block_count = true, const std::string& arch = "llama",
                        std::uint32_t split_count = 0) {
  core::GgufWriter w;
  w.add_string("general.architecture", arch);
  if (with_block_count) w.add_u32(arch + ".block_count", 1);
  if (split_count != 0) w.add_u32("split.count", split_count);
  w.add_tensor("blk.0.ffn_down.weight", 0, {64, 2}, 64 * 4, [value](std::uint64_t, std::uint64_t rows, std::uint8_t* out) {
    for (std::uint64_t i = 0; i < rows * 64; ++i) std::memcpy(out + 4 * i, &value, 4);
  });
  const std::string path = (dir / name).string();
  EXPECT_TRUE(w.write(path));
  return path;
}

TEST(QuantizeModel, WeightsItCannotRepresentAndFilesItCannotRewriteAreRefused) {
  test::TempDir dir;
  const std::string out = (dir / "out.gguf").string();
  const auto refusal = [&](const std::string& input, const char* type) {
    auto done = quantize_model(input, out, options_for(type));
    EXPECT_FALSE(done) << input;
    EXPECT_FALSE(std::filesystem::exists(out));
    return done ? std::string() : done.error().message;
  };
  ASSERT_TRUE(quantize_model(small_model(dir.path(), "ok.gguf", 0.5f), out, options_for("Q8_0")));
  std::filesystem::remove(out);
  EXPECT_NE(refusal(small_model(dir.path(), "nan.gguf", std::nanf("")), "Q4_0").find("NaN or infinite"), std::string::npos);
  EXPECT_NE(refusal(small_model(dir.path(), "huge.gguf", 1e30f), "F16").find("too large for f16"), std::string::npos);
  EXPECT_NE(refusal(small_model(dir.path(), "huge8.gguf", 1e30f), "Q8_0").find("too large for q8_0"), std::string::npos);
  EXPECT_NE(refusal(small_model(dir.path(), "nolayers.gguf", 0.5f, false), "Q4_K_M").find("no llama.block_count"),
            std::string::npos);
  EXPECT_NE(refusal(small_model(dir.path(), "falcon.gguf", 0.5f, true, "falcon"), "Q4_K_M").find("falcon"), std::string::npos);
  EXPECT_NE(refusal(small_model(dir.path(), "shard.gguf", 0.5f, true, "llama", 3), "Q8_0").find("split model"),
            std::string::npos);
  // Writing next to the input under its .partial name would destroy it.
  const std::string input = small_model(dir.path(), "m.gguf", 0.5f);
  const std::string partial_of = (dir / "m").string();
  std::filesystem::rename(input, partial_of + ".partial");
  auto self = quantize_model(partial_of + ".partial", partial_of, options_for("Q8_0"));
  ASSERT_FALSE(self);
  EXPECT_NE(self.error().message.find("overwrite the input"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(partial_of + ".partial"));
}

TEST(QuantizeModel, AStopEndsItAtTheNextSlabAndLeavesNothing) {
  test::TempDir dir;
  const std::string out = (dir / "out.gguf").string();
  std::atomic<bool> stop{true};
  QuantizeOptions options = options_for("Q8_0");
  options.stop = &stop;
  auto stopped = quantize_model(small_model(dir.path(), "m.gguf", 0.5f), out, options);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().code, LPX_ERR_CANCELLED);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_FALSE(std::filesystem::exists(out + ".partial"));
}

}  // namespace
}  // namespace lpx::core
