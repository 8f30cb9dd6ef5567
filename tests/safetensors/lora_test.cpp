// LoRA adapters merged as the model loads, against llama.cpp's --lora: tests/fixtures/lora/ holds
// a synthetic rank-4 adapter for the qwen3 fixture (converted to GGUF) and the peer's logits at
// every position of two prompts with the adapter at scales 1 and 0.5, and without it
// (tools/make_lora_fixtures.py, outside CI). The same adapter resident and applied per request
// (model "MODEL:ADAPTER") against the same logits, against the merged model, and several
// adapters in one batch. Then the refusals: adapters that do not fit the model.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>

#include "engine/engine_test_support.hpp"
#include "model/lora_merge.hpp"
#include "model/resident_adapter.hpp"
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

  // The largest difference between LPX's logits on `model` and the peer's under `scale`; with
  // `adapter`, that resident adapter runs beside the weights.
  double largest_difference(const std::string& model, const char* scale,
                            const std::vector<core::AdapterSpec>& adapters = {}, const std::string& adapter = "") {
    ForwardRig rig(host_, model, "cpu", {}, 1024, adapters);
    rig.use_adapter(adapter);
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

std::string adapter_file() { return (kFixtures / "lora/qwen3-lora-r4.gguf").string(); }

TEST_F(Lora, PerRequestLogitsMatchLlamaCppsLoraAtEveryPosition) {
  const std::vector<core::AdapterSpec> adapters = {{"full", {adapter_file(), 1.0f}}, {"half", {adapter_file(), 0.5f}}};
  const double base = largest_difference(base_, "0", adapters, "");
  const double full = largest_difference(base_, "1", adapters, "full");
  const double half = largest_difference(base_, "0.5", adapters, "half");
  std::cout << "largest logit difference, per request: no adapter " << base << ", scale 1 " << full
            << ", scale 0.5 " << half << "\n";
  EXPECT_LT(base, kLogitTolerance);
  EXPECT_LT(full, kLogitTolerance);
  EXPECT_LT(half, kLogitTolerance);
  EXPECT_GT(largest_difference(base_, "1", adapters, "half"), 100 * kLogitTolerance) << "the scale matters";
}

// The ids of the fixture's longest prompt, repeated to `n` tokens (two KV blocks and more).
std::vector<std::int32_t> prompt_of(std::size_t n) {
  std::vector<std::int32_t> ids;
  const boost::json::value record = expected();
  const auto& cases = record.at("cases").as_array();
  const auto& longest = cases.back().at("ids").as_array();
  while (ids.size() < n) ids.push_back(static_cast<std::int32_t>(longest[ids.size() % longest.size()].to_number<std::int64_t>()));
  return ids;
}

lpx_request token_request(const std::vector<std::int32_t>& ids, const char* adapter, std::uint32_t max_tokens = 12) {
  lpx_request r{};
  r.struct_size = sizeof r;
  r.prompt_tokens = ids.data();
  r.prompt_token_count = ids.size();
  r.max_tokens = max_tokens;
  r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  r.adapter = adapter;
  return r;
}

TEST_F(Lora, PerRequestAgreesWithMergedAndAdaptersMixInOneBatch) {
  const std::vector<core::AdapterSpec> adapters = {{"full", {adapter_file(), 1.0f}}, {"half", {adapter_file(), 0.5f}}};
  core::EngineConfig config;
  config.max_sequences = 4;
  auto engine = host_.engine(base_, "cpu", {"greedy"}, config, {}, {}, {}, adapters);
  auto merged_full = host_.engine(merged({adapter_file(), 1.0f}), "cpu", {"greedy"}, config);
  auto merged_half = host_.engine(merged({adapter_file(), 0.5f}), "cpu", {"greedy"}, config);
  ASSERT_TRUE(engine && merged_full && merged_half);
  const std::vector<std::int32_t> ids = prompt_of(20);

  // Alone: each adapter answers as the model it was merged into does.
  const Generation base = generate(*engine, token_request(ids, nullptr));
  const Generation full = generate(*engine, token_request(ids, "full"));
  const Generation half = generate(*engine, token_request(ids, "half"));
  ASSERT_TRUE(base.error.empty() && full.error.empty() && half.error.empty()) << base.error << full.error << half.error;
  EXPECT_EQ(full.tokens, generate(*merged_full, token_request(ids, nullptr)).tokens);
  EXPECT_EQ(half.tokens, generate(*merged_half, token_request(ids, nullptr)).tokens);
  EXPECT_NE(full.tokens, base.tokens) << "the adapter changes the answer";
  EXPECT_NE(full.tokens, half.tokens);

  // Together, in one batch, in an order that puts different adapters side by side: each as alone.
  const char* order[6] = {"half", nullptr, "full", "full", nullptr, "half"};
  std::vector<lpx_request> requests;
  for (const char* adapter : order) requests.push_back(token_request(ids, adapter));
  const std::vector<Generation> together = generate_together(*engine, requests);
  for (std::size_t i = 0; i < together.size(); ++i) {
    ASSERT_TRUE(together[i].error.empty()) << together[i].error;
    const Generation& alone = order[i] == nullptr ? base : std::string(order[i]) == "full" ? full : half;
    EXPECT_EQ(together[i].tokens, alone.tokens) << "request " << i << " (" << (order[i] ? order[i] : "no adapter")
                                                << ") in a mixed batch";
  }
}

TEST_F(Lora, CachedPrefixesAreNotSharedAcrossAdapters) {
  const std::vector<core::AdapterSpec> adapters = {{"full", {adapter_file(), 1.0f}}, {"half", {adapter_file(), 0.5f}}};
  core::EngineConfig config;
  config.prefix_cache = true;
  auto engine = host_.engine(base_, "cpu", {"greedy"}, config, {}, {}, {}, adapters);
  ASSERT_TRUE(engine);
  const std::vector<std::int32_t> ids = prompt_of(3 * config.block_size + 5);
  const Generation base = generate(*engine, token_request(ids, nullptr));
  const Generation first = generate(*engine, token_request(ids, "full"));
  EXPECT_EQ(first.cached_tokens, 0u) << "the base model's K/V is not the adapter's";
  const Generation again = generate(*engine, token_request(ids, "full"));
  EXPECT_GT(again.cached_tokens, 0u) << "the adapter's own prefix is reused";
  EXPECT_EQ(again.tokens, first.tokens);
  const Generation base_again = generate(*engine, token_request(ids, nullptr));
  EXPECT_GT(base_again.cached_tokens, 0u);
  EXPECT_EQ(base_again.tokens, base.tokens);

  // A session's cached turn is dropped when the next turn asks for another adapter (one whose
  // prompts nothing has cached yet).
  const std::uint64_t session = engine->session_create();
  lpx_request turn = token_request(ids, "full");
  turn.session = session;
  const Generation in_session = generate(*engine, turn);
  turn.adapter = "half";
  const Generation switched = generate(*engine, turn);
  EXPECT_EQ(in_session.tokens, first.tokens);
  EXPECT_EQ(switched.cached_tokens, 0u);
  EXPECT_EQ(switched.tokens, generate(*engine, token_request(ids, "half")).tokens);
  engine->session_destroy(session);
}

TEST_F(Lora, UnknownAdaptersAreRefusedAndQuantizedBasesServeThem) {
  const std::vector<core::AdapterSpec> adapters = {{"full", {adapter_file(), 1.0f}}};
  auto engine = host_.engine(base_, "cpu", {"greedy"}, {}, {}, {}, {}, adapters);
  ASSERT_TRUE(engine);
  const std::vector<std::int32_t> ids = prompt_of(8);
  lpx_request r = token_request(ids, "fool");
  r.on_done = [](void*, const lpx_request_result*) {};
  auto refused = engine->submit(r);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, LPX_ERR_NOT_FOUND);
  EXPECT_EQ(refused.error().field, "model");
  EXPECT_NE(refused.error().message.find("no LoRA adapter 'fool' is loaded with this model (adapters: full)"),
            std::string::npos) << refused.error();

  // Beside Q8_0 weights, which a merge refuses: the adapter still changes the answer.
  const std::string q8 = (dir_ / "q8.gguf").string();
  auto source = core::ModelFile::open(base_, host_.registry());
  ASSERT_TRUE(source);
  core::ConvertOptions options;
  options.mix = core::QuantMix::Q8_0;
  ASSERT_TRUE(core::convert_model(**source, q8, options));
  auto quantized = host_.engine(q8, "cpu", {"greedy"}, {}, {}, {}, {}, adapters);
  ASSERT_TRUE(quantized);
  const Generation plain = generate(*quantized, token_request(ids, nullptr));
  const Generation adapted = generate(*quantized, token_request(ids, "full"));
  EXPECT_TRUE(adapted.error.empty()) << adapted.error;
  EXPECT_NE(plain.tokens, adapted.tokens);
}

TEST(AdapterSpec, ReadsANameAFileAndAnOptionalScale) {
  auto spec = core::parse_adapter_spec("sql=dir/a.gguf@0.5");
  ASSERT_TRUE(spec) << spec.error();
  EXPECT_EQ(spec->name, "sql");
  EXPECT_EQ(spec->lora.path, "dir/a.gguf");
  EXPECT_EQ(spec->lora.scale, 0.5f);
  EXPECT_EQ(core::parse_adapter_spec("v1.2_x-y=a.gguf")->lora.scale, 1.0f);
  EXPECT_FALSE(core::parse_adapter_spec("a.gguf"));
  EXPECT_FALSE(core::parse_adapter_spec("=a.gguf"));
  EXPECT_FALSE(core::parse_adapter_spec("a:b=a.gguf"));
  EXPECT_FALSE(core::parse_adapter_spec("a="));
  EXPECT_FALSE(core::adapter_specs({"a=x.gguf", "a=y.gguf"}));
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
