// What each family's architecture makes of its file: small synthetic models of the families'
// layouts (synth, fewer and narrower layers), described as the engine describes them, checked
// field by field against what the family's metadata and rules say (docs/models.md). The peer
// fixtures check the arithmetic; these check the mapping, including what they cannot reach
// (Phi-3's long factors, which need a context past 4096).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "engine_test_support.hpp"
#include "model/architecture.hpp"
#include "model/model_validation.hpp"
#include "support/test_support.hpp"
#include "synth/model_shapes.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::test {
namespace {

class FamilyDescription : public ::testing::Test {
 protected:
  // `like` cut to `layers` layers, 256 wide (4 heads of 64), a 512-token vocabulary.
  core::TransformerModel describe(const char* like, std::uint32_t layers, std::uint32_t context) {
    core::synth::ModelShape shape = *core::synth::find_model_shape(like);
    shape.n_layer = layers;
    shape.n_embd = 256;
    shape.n_head = 4;
    shape.n_head_kv = 2;
    shape.n_ff = 512;
    shape.n_vocab = 512;
    shape.family.head_dim = shape.family.head_dim != 0 ? 64 : 0;
    const std::string path = (dir_ / (std::string(like) + ".gguf")).string();
    auto written = core::synth::write_synthetic_model(shape, LPX_TENSOR_F16, 3, path);
    EXPECT_TRUE(written) << written.error();
    auto file = core::ModelFile::open(path, host_.registry());
    EXPECT_TRUE(file) << file.error();
    files_.push_back(std::move(*file));
    auto h = core::validate_model(*files_.back());
    EXPECT_TRUE(h) << h.error();
    auto model = core::find_architecture(h->architecture)->describe(*files_.back(), *h, {context});
    EXPECT_TRUE(model) << model.error();
    return std::move(*model);
  }

  const float* tensor_data(const char* name) const {
    return static_cast<const float*>(files_.back()->find_tensor(name)->data);
  }

  TempDir dir_;
  TestHost host_;
  std::vector<std::unique_ptr<core::ModelFile>> files_;
};

TEST_F(FamilyDescription, Gemma3InterleavesFiveLocalLayersWithOneGlobal) {
  const core::TransformerModel model = describe("gemma3-270m", 6, 1024);
  const lpx_transformer_desc& d = model.desc();
  for (std::uint32_t l = 0; l < 6; ++l) {
    const lpx_transformer_layer& layer = model.layer(l);
    const bool global = l == 5;
    EXPECT_EQ(layer.window, global ? 0u : 512u) << l;
    EXPECT_EQ(layer.rope->freq_base, global ? 1e6f : 10000.0f) << l;
    EXPECT_EQ(layer.rope->mode, LPX_ROPE_NEOX);
    EXPECT_NE(layer.q_norm, nullptr);
    EXPECT_NE(layer.post_attention_norm, nullptr);
    EXPECT_NE(layer.post_ffn_norm, nullptr);
  }
  EXPECT_EQ(d.activation, LPX_ACTIVATION_GELU_TANH);
  EXPECT_EQ(d.embedding_scale, std::sqrt(256.0f));
  EXPECT_EQ(d.attention_scale, 1.0f / 8.0f);  // 1/sqrt(head_dim 64)
  EXPECT_EQ(d.attention_softcap, 0.0f);
  EXPECT_EQ(d.final_softcap, 0.0f);
  EXPECT_TRUE(model.scales_queries());
  EXPECT_EQ(d.output, d.token_embd);
}

TEST_F(FamilyDescription, Gemma2AlternatesWindowsAndSoftCapsScoresAndLogits) {
  const core::TransformerModel model = describe("gemma2-2b", 2, 1024);
  EXPECT_EQ(model.layer(0).window, 4096u);
  EXPECT_EQ(model.layer(1).window, 0u);
  EXPECT_EQ(model.layer(0).rope, model.layer(1).rope) << "local layers rotate as global ones";
  EXPECT_EQ(model.layer(0).q_norm, nullptr);
  EXPECT_EQ(model.desc().attention_softcap, 50.0f);
  EXPECT_EQ(model.desc().final_softcap, 30.0f);
  EXPECT_EQ(model.desc().output, model.desc().token_embd);
}

TEST_F(FamilyDescription, Qwen3NormsQueriesAndKeysWithoutBiases) {
  const core::TransformerModel model = describe("qwen3-0.6b", 2, 256);
  EXPECT_NE(model.layer(1).q_norm, nullptr);
  EXPECT_NE(model.layer(1).k_norm, nullptr);
  EXPECT_NE(model.layer(1).q_norm, model.layer(1).k_norm);
  EXPECT_EQ(model.layer(1).bq, nullptr);
  EXPECT_EQ(model.layer(1).rope->mode, LPX_ROPE_NEOX);
  EXPECT_FALSE(model.scales_queries());
}

TEST_F(FamilyDescription, SmolLM3LeavesEveryFourthLayerWithoutRope) {
  const core::TransformerModel model = describe("smollm3-3b", 8, 256);
  for (std::uint32_t l = 0; l < 8; ++l) {
    EXPECT_EQ(model.layer(l).rope == nullptr, l == 3 || l == 7) << l;
  }
  EXPECT_EQ(model.layer(0).rope->mode, LPX_ROPE_NORMAL);
}

TEST_F(FamilyDescription, GraniteCarriesItsFourMultipliers) {
  const core::TransformerModel model = describe("granite-3.3-2b", 2, 256);
  const lpx_transformer_desc& d = model.desc();
  EXPECT_EQ(d.embedding_scale, 12.0f);
  EXPECT_EQ(d.residual_scale, 0.22f);
  EXPECT_EQ(d.attention_scale, 0.015625f);
  EXPECT_EQ(d.logit_scale, 1.0f / 8.0f);  // the file's logit_scale divides
}

TEST_F(FamilyDescription, Phi3PicksLongRopeFactorsOnlyPastTheOriginalContext) {
  const core::TransformerModel within = describe("phi3-mini", 1, 4096);
  const float* short_factors = tensor_data("rope_factors_short.weight");
  const core::TransformerModel past = describe("phi3-mini", 1, 4097);
  const float* long_factors = tensor_data("rope_factors_long.weight");
  const std::size_t pairs = 32;  // head_dim 64
  EXPECT_EQ(std::memcmp(within.layer(0).rope->freq_factors, short_factors, pairs * 4), 0);
  EXPECT_EQ(std::memcmp(past.layer(0).rope->freq_factors, long_factors, pairs * 4), 0);
  EXPECT_NE(std::memcmp(short_factors, long_factors, pairs * 4), 0);
  // Phi-3.5's attention factor for 131072 / 4096: sqrt(1 + ln 32 / ln 4096) = sqrt(17/12).
  EXPECT_NEAR(past.layer(0).rope->attn_factor, std::sqrt(17.0f / 12.0f), 1e-6f);
  EXPECT_NE(past.layer(0).wqkv, nullptr);
  EXPECT_NE(past.layer(0).ffn_gate_up, nullptr);
  EXPECT_EQ(past.layer(0).window, 0u) << "llama.cpp ignores Phi-3's sliding window";
  EXPECT_TRUE(past.scales_queries());
}

}  // namespace
}  // namespace lpx::test
