// LoRA adapters merged as the model loads, against llama.cpp's --lora: tests/fixtures/lora/ holds
// a synthetic rank-4 adapter for the qwen3 fixture (converted to GGUF) and the peer's logits at
// every position of two prompts with the adapter at scales 1 and 0.5, and without it
// (tools/make_lora_fixtures.py, outside CI). Then the refusals: adapters that do not fit the model.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "engine/engine_test_support.hpp"
#include "model/lora_adapter.hpp"
#include "model/model_file.hpp"
#include "quantize/convert_model.hpp"
#include "quantize/gguf_writer.hpp"
#include "support/test_support.hpp"
#include "util/sha256.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

// As in hf_reference_test.cpp: f32 weights both sides, LPX's f16 KV cache.
constexpr double kLogitTolerance = 5e-3;

const fs::path kFixtures = fs::path(LPX_SOURCE_DIR) / "tests/fixtures";

boost::json::value expected() {
  std::ifstream in(kFixtures / "lora/expected.json");
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str());
}

class Lora : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = (dir_ / "qwen3.gguf").string();
    auto source = core::ModelFile::open((kFixtures / "hf/qwen3").string(), host_.registry());
    ASSERT_TRUE(source) << source.error();
    ASSERT_TRUE(core::convert_model(**source, base_, {}));
    auto sha = core::sha256_file(base_);
    ASSERT_TRUE(sha);
    const boost::json::value record = expected();
    ASSERT_EQ(*sha, std::string(record.at("base").at("sha256").as_string()))
        << "convert wrote a different base than the one the peer ran: regenerate the fixture "
           "(tools/make_lora_fixtures.py)";
  }

  // The base with `spec` merged, written out for a forward pass.
  std::string merged(const core::LoraSpec& spec) {
    auto model = core::ModelFile::open(base_, host_.registry());
    EXPECT_TRUE(model) << model.error();
    auto summary = core::merge_lora(**model, spec, host_.registry());
    EXPECT_TRUE(summary) << summary.error();
    if (!summary) return base_;
    EXPECT_EQ(summary->tensors, 3u * 4u + 1u);  // four weights in each of three layers, and the head
    EXPECT_EQ(summary->rank, 4u);
    const std::string out = (dir_ / ("merged-" + std::to_string(spec.scale) + ".gguf")).string();
    EXPECT_TRUE(core::convert_model(**model, out, {}));
    return out;
  }

  // The largest difference between LPX's logits on `model` and the peer's under `scale`.
  double largest_difference(const std::string& model, const char* scale) {
    ForwardRig rig(host_, model, "cpu");
    double worst = 0;
    const boost::json::value record = expected();  // kept: the loop reads into it
    for (const auto& c : record.at("cases").as_array()) {
      rig.reset();
      const auto& ids = c.at("ids").as_array();
      const auto& rows = c.at("scales").at(scale).as_array();
      for (std::size_t pos = 0; pos < ids.size(); ++pos) {
        const auto& logits = rig.feed({static_cast<std::int32_t>(ids[pos].to_number<std::int64_t>())});
        const auto& row = rows[pos].as_array();
        for (std::size_t k = 0; k < row.size(); ++k) {
          worst = std::max(worst, std::fabs(double{logits[k]} - row[k].to_number<double>()));
        }
      }
    }
    return worst;
  }

  TestHost host_;
  TempDir dir_;
  std::string base_;
};

TEST_F(Lora, MergedLogitsMatchLlamaCppsLoraAtEveryPosition) {
  const std::string adapter = (kFixtures / "lora/qwen3-lora-r4.gguf").string();
  const double base = largest_difference(base_, "0");
  const double full = largest_difference(merged({adapter, 1.0f}), "1");
  const double half = largest_difference(merged({adapter, 0.5f}), "0.5");
  std::cout << "largest logit difference: no adapter " << base << ", scale 1 " << full << ", scale 0.5 " << half
            << "\n";
  EXPECT_LT(base, kLogitTolerance);
  EXPECT_LT(full, kLogitTolerance);
  EXPECT_LT(half, kLogitTolerance);
  // The adapter matters: without it, the peer's adapted logits are far off.
  EXPECT_GT(largest_difference(base_, "1"), 100 * kLogitTolerance);
}

TEST_F(Lora, RefusesAdaptersThatDoNotFit) {
  const auto adapter = [&](const std::string& name, const std::string& arch, const std::string& weight,
                           std::uint64_t in, std::uint64_t out, const std::string& type = "adapter") {
    core::GgufWriter w;
    w.add_string("general.architecture", arch);
    w.add_string("general.type", type);
    w.add_string("adapter.type", "lora");
    w.add_f32("adapter.lora.alpha", 8.0f);
    const auto zeros = [](std::uint64_t, std::uint64_t, std::uint8_t*) {};
    w.add_tensor(weight + ".lora_a", 0, {in, 4}, in * 4, zeros);
    w.add_tensor(weight + ".lora_b", 0, {4, out}, 16, zeros);
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(w.write(path));
    return path;
  };
  const auto refusal = [&](const std::string& path, const std::string& model) {
    auto m = core::ModelFile::open(model, host_.registry());
    EXPECT_TRUE(m);
    auto r = core::merge_lora(**m, {path, 1.0f}, host_.registry());
    return r ? std::string("(merged)") : r.error().message;
  };
  struct Case {
    std::string adapter;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {adapter("llama.gguf", "llama", "blk.0.attn_q.weight", 64, 128), "an adapter for llama, not for qwen3"},
      {adapter("control.gguf", "qwen3", "blk.0.attn_q.weight", 64, 128, "model"), "not an adapter"},
      {adapter("shape.gguf", "qwen3", "blk.0.attn_q.weight", 32, 128), "its lora_a is [32, 4]"},
      {adapter("missing.gguf", "qwen3", "blk.9.attn_q.weight", 64, 128), "adapts 'blk.9.attn_q.weight', which"},
      {adapter("embd.gguf", "qwen3", "token_embd.weight", 64, 512), "token embedding are not supported"},
  };
  for (const Case& c : cases) {
    const std::string error = refusal(c.adapter, base_);
    EXPECT_NE(error.find(c.expected), std::string::npos) << "'" << error << "' does not say '" << c.expected << "'";
  }
  // A quantized base: merging would quantize twice.
  const std::string q8 = (dir_ / "q8.gguf").string();
  auto source = core::ModelFile::open(base_, host_.registry());
  core::ConvertOptions options;
  options.mix = core::QuantMix::Q8_0;
  ASSERT_TRUE(core::convert_model(**source, q8, options));
  const std::string error = refusal((kFixtures / "lora/qwen3-lora-r4.gguf").string(), q8);
  EXPECT_NE(error.find("merge the adapter into the F16/BF16/F32 model, then quantize it"), std::string::npos) << error;
}

TEST(LoraSpec, ReadsAFileAndAnOptionalScale) {
  EXPECT_EQ(core::parse_lora_spec("a.gguf")->path, "a.gguf");
  EXPECT_EQ(core::parse_lora_spec("a.gguf")->scale, 1.0f);
  EXPECT_EQ(core::parse_lora_spec("dir@x/a.gguf@0.5")->path, "dir@x/a.gguf");
  EXPECT_EQ(core::parse_lora_spec("dir@x/a.gguf@0.5")->scale, 0.5f);
  EXPECT_EQ(core::parse_lora_spec("a@b.gguf")->path, "a@b.gguf");  // not a number: part of the name
  EXPECT_FALSE(core::parse_lora_spec("@0.5"));
}

TEST(LoraCli, GenerateMergesTheAdapterItIsGiven) {
  TempDir dir;
  const std::string base = (dir / "qwen3.gguf").string();
  ASSERT_EQ(run_lpx({"convert", (kFixtures / "hf/qwen3").string(), "-o", base}).exit_code, 0);
  const std::string adapter = (kFixtures / "lora/qwen3-lora-r4.gguf").string();
  CommandResult plain = run_lpx({"generate", "--model", base, "--prompt", "Hello", "--max-tokens", "8",
                                 "--temperature", "0", "--ids", "--device", "cpu"});
  CommandResult adapted = run_lpx({"generate", "--model", base, "--prompt", "Hello", "--max-tokens", "8",
                                   "--temperature", "0", "--ids", "--device", "cpu", "--lora", adapter + "@1"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(adapted.exit_code, 0) << adapted.err;
  EXPECT_NE(adapted.err.find("LoRA adapter " + adapter + " merged at scale 1 (rank 4, alpha 8): 13 weights changed"),
            std::string::npos) << adapted.err;
  EXPECT_NE(plain.out, adapted.out) << "the adapter changes the answer";
  CommandResult missing = run_lpx({"generate", "--model", base, "--prompt", "x", "--lora", (dir / "none.gguf").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no such file"), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace lpx::test
