// Architecture consistency: a model file must be a complete, self-consistent model.
#include "model/model_validation.hpp"

#include <gtest/gtest.h>

#include "formats/tiny_llama.hpp"
#include "support/test_support.hpp"

namespace lpx::core {
namespace {

class ModelValidation : public ::testing::Test {
 protected:
  // Writes `model` (with `tweak` applied to its builder) and validates it.
  Expected<Hyperparameters> check(const test::TinyLlama& model,
                                  void (*tweak)(test::GgufBuilder&) = nullptr) {
    test::GgufBuilder builder = model.builder();
    if (tweak) tweak(builder);
    const std::string path = (dir / "m.gguf").string();
    builder.write(path);
    file.reset();
    auto opened = ModelFile::open(path, registry);
    if (!opened) return unexpected(opened.error().prefixed("open: "));
    file = std::move(*opened);
    return validate_model(*file);
  }
  // A malformed file is an invalid argument; a well-formed one this build cannot run, unsupported.
  void expect_error(const test::TinyLlama& model, const std::string& message,
                    void (*tweak)(test::GgufBuilder&) = nullptr,
                    lpx_status_code code = LPX_ERR_INVALID_ARGUMENT) {
    auto result = check(model, tweak);
    ASSERT_FALSE(result) << "accepted";
    EXPECT_EQ(result.error().message, message);
    EXPECT_EQ(result.error().code, code) << message;
  }

  test::TempDir dir;
  MetricsRegistry metrics;
  HostServices services{metrics};
  PluginRegistry registry{{LPX_BUILTIN_PLUGIN_DIR}, services};
  std::unique_ptr<ModelFile> file;
};

TEST_F(ModelValidation, AcceptsAConsistentLlama) {
  auto h = check(test::TinyLlama{});
  ASSERT_TRUE(h) << h.error();
  EXPECT_EQ(h->n_layer, 2u);
  EXPECT_EQ(h->head_dim, 16u);
  EXPECT_EQ(h->n_vocab, 40u);
  EXPECT_FALSE(h->tied_output);
  EXPECT_EQ(h->n_params, 64u * 40 * 2 + 64 + 2 * (64 * 2 + 64 * 64 * 2 + 64 * 32 * 2 + 64 * 96 * 3));
}

TEST_F(ModelValidation, AcceptsATiedOutputAndQwen2Biases) {
  test::TinyLlama tied;
  tied.tied_output = true;
  auto h = check(tied);
  ASSERT_TRUE(h) << h.error();
  EXPECT_TRUE(h->tied_output);
  test::TinyLlama qwen;
  qwen.architecture = "qwen2";
  auto q = check(qwen);
  ASSERT_TRUE(q) << q.error();
}

TEST_F(ModelValidation, RefusesUnknownArchitectures) {
  test::TinyLlama model;
  model.architecture = "lama";
  expect_error(model, "architecture 'lama' is not supported (did you mean 'llama'?) (supported: gemma2, gemma3, granite, llama, phi3, qwen2, qwen3, smollm3)",
               nullptr, LPX_ERR_UNSUPPORTED);
}

TEST_F(ModelValidation, RefusesHeadCountsThatDoNotDivide) {
  test::TinyLlama model;
  model.n_head_kv = 3;
  expect_error(model, "llama.attention.head_count 4 is not a multiple of llama.attention.head_count_kv 3");
}

TEST_F(ModelValidation, RefusesAnEmbeddingNotSplitIntoHeads) {
  test::TinyLlama model;
  model.n_head = 5;
  model.n_head_kv = 5;
  expect_error(model, "llama.embedding_length 64 is not a multiple of llama.attention.head_count 5");
}

TEST_F(ModelValidation, RefusesRopeDimensionsBeyondTheHead) {
  test::TinyLlama model;
  model.n_rot = 18;
  expect_error(model, "llama.rope.dimension_count 18 must be even and at most the head dimension 16");
}

TEST_F(ModelValidation, RefusesABlockCountThatDisagreesWithTheTensors) {
  test::TinyLlama model;
  model.metadata_u32["llama.block_count"] = 3;  // the file has tensors for 2 layers
  expect_error(model, "missing tensor 'blk.2.attn_norm.weight'");
}

TEST_F(ModelValidation, RefusesAMissingTensor) {
  test::TinyLlama model;
  model.skip_tensors = {"blk.1.attn_v.weight"};
  expect_error(model, "missing tensor 'blk.1.attn_v.weight'");
}

TEST_F(ModelValidation, RefusesAWronglyShapedTensor) {
  test::TinyLlama model;
  model.ffn_up_shape_override = "bad";
  expect_error(model, "tensor 'blk.0.ffn_up.weight' has shape [64, 128], the hyperparameters imply [64, 96]");
}

TEST_F(ModelValidation, RefusesUnexpectedTensors) {
  test::TinyLlama model;
  model.extra_tensor = "blk.7.attn_norm.weight";
  expect_error(model, "unexpected tensor 'blk.7.attn_norm.weight' for architecture 'llama' with 2 layers");
}

TEST_F(ModelValidation, RefusesAVocabularyThatDisagreesWithTheEmbedding) {
  test::TinyLlama model;
  model.tokenizer_tokens = 41;
  expect_error(model, "the tokenizer has 41 tokens but tensor 'token_embd.weight' has 40 rows");
  expect_error(test::TinyLlama{}, "llama.vocab_size 50 disagrees with the 40 rows of tensor 'token_embd.weight'",
               [](test::GgufBuilder& b) { b.u32("llama.vocab_size", 50); });
}

TEST_F(ModelValidation, RefusesMixtureOfExperts) {
  expect_error(test::TinyLlama{}, "mixture-of-experts models (llama.expert_count 8) are not supported",
               [](test::GgufBuilder& b) { b.u32("llama.expert_count", 8); }, LPX_ERR_UNSUPPORTED);
}

TEST_F(ModelValidation, RefusesMissingZeroOrWronglyTypedHyperparameters) {
  test::TinyLlama zero;
  zero.metadata_u32["llama.context_length"] = 0;
  expect_error(zero, "metadata 'llama.context_length' is 0, outside 1..1048576");

  test::TinyLlama missing;
  missing.skip_metadata = {"llama.attention.layer_norm_rms_epsilon"};
  expect_error(missing, "missing metadata 'llama.attention.layer_norm_rms_epsilon'");

  test::TinyLlama as_text;
  as_text.skip_metadata = {"llama.block_count"};
  expect_error(as_text, "metadata 'llama.block_count' should be a non-negative integer, found string",
               [](test::GgufBuilder& b) { b.string("llama.block_count", "2"); });
}

TEST_F(ModelValidation, AcceptsQuantizedMatricesButNotQuantizedVectors) {
  test::TinyLlama matrices;
  matrices.weight_type = test::kGgmlQ8_0;  // 64-wide rows are whole Q8_0 blocks
  auto h = check(matrices);
  EXPECT_TRUE(h) << h.error();
  test::TinyLlama vectors;
  vectors.norm_type = test::kGgmlQ8_0;
  expect_error(vectors, "tensor 'output_norm.weight' is a vector and must be f32, f16 or bf16");
}

}  // namespace
}  // namespace lpx::core
