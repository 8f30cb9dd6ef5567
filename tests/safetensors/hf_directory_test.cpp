// Opening Hugging Face directories through the safetensors plugin: what a good one looks like to
// the core, and a clean refusal, naming the file and the fault, for each broken one. The broken
// directories are copies of tests/fixtures/hf/llama with one file changed.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "engine/engine_test_support.hpp"
#include "model/model_file.hpp"
#include "safetensors/safetensors_bytes.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& family) {
  return fs::path(LPX_SOURCE_DIR) / "tests/fixtures/hf" / family;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  if (at == std::string::npos) throw std::runtime_error("'" + from + "' is not in the fixture");
  return text.replace(at, from.size(), to);
}

class HfDirectory : public ::testing::Test {
 protected:
  // A copy of the `family` fixture with `changes` (file name -> new content; "" removes the file).
  fs::path variant(const std::string& name, const std::map<std::string, std::string>& changes,
                   const std::string& family = "llama") {
    const fs::path dir = fs::path(LPX_BINARY_DIR) / "test-work" / ("hf-" + name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (const auto& entry : fs::directory_iterator(fixture(family))) {
      fs::copy_file(entry.path(), dir / entry.path().filename());
    }
    for (const auto& [file, content] : changes) {
      if (content.empty()) {
        fs::remove(dir / file);
      } else {
        write_directory_file(dir / file, content);
      }
    }
    return dir;
  }

  static void write_directory_file(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
  }

  std::string refusal(const fs::path& dir) {
    auto file = core::ModelFile::open(dir.string(), host_.registry());
    if (file) return "(opened)";
    return file.error().message;
  }

  TestHost host_;
};

TEST_F(HfDirectory, OpensAsGgufNamedMetadataAndTensors) {
  auto file = core::ModelFile::open(fixture("llama").string() + "/", host_.registry());
  ASSERT_TRUE(file) << file.error();
  const core::ModelFile& f = **file;
  EXPECT_EQ(f.format_name(), "safetensors");
  EXPECT_EQ(*f.get_string("general.architecture"), "llama");
  EXPECT_EQ(*f.get_string("general.name"), "llama");
  EXPECT_EQ(*f.get_uint("llama.block_count"), 3u);
  EXPECT_EQ(*f.get_uint("llama.attention.head_count_kv"), 2u);
  EXPECT_EQ(*f.get_string("tokenizer.ggml.model"), "gpt2");
  EXPECT_TRUE(f.has("tokenizer.chat_template"));
  const lpx_tensor_view* q = f.find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, LPX_TENSOR_BF16);
  EXPECT_EQ(q->dims[0], 64);  // GGUF order: the contiguous (input) dimension first
  EXPECT_EQ(q->dims[1], 64);
  const lpx_tensor_view* norm = f.find_tensor("blk.0.attn_norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->type, LPX_TENSOR_F32);  // 1-D tensors become f32, as in GGUF files
  EXPECT_EQ(f.find_tensor("model.layers.0.self_attn.q_proj.weight"), nullptr);
}

TEST_F(HfDirectory, NamesThePreTokenizersLlamaCppKnows) {
  // The regexes run in LPX either way; the name lets llama.cpp read a converted file right.
  const std::pair<const char*, const char*> cases[] = {
      {"llama", "smollm"}, {"llama3-sharded", "llama-bpe"}, {"qwen2", "qwen2"}, {"granite", "gpt-2"}};
  for (const auto& [family, name] : cases) {
    auto file = core::ModelFile::open(fixture(family).string(), host_.registry());
    ASSERT_TRUE(file) << file.error();
    EXPECT_EQ(*file.value()->get_string("tokenizer.ggml.pre"), name) << family;
    EXPECT_TRUE(file.value()->has("tokenizer.lpx.pre_patterns")) << family;
  }
  auto spm = core::ModelFile::open(fixture("gemma3").string(), host_.registry());
  ASSERT_TRUE(spm);
  EXPECT_FALSE(spm.value()->has("tokenizer.ggml.pre"));
}

TEST_F(HfDirectory, OpensThroughOneOfItsSafetensorsFiles) {
  auto file = core::ModelFile::open((fixture("llama3-sharded") / "model-00002-of-00005.safetensors").string(),
                                    host_.registry());
  ASSERT_TRUE(file) << file.error();
  EXPECT_EQ(file.value()->tensors().size(), 29u);  // every shard's, through the index
}

TEST_F(HfDirectory, GemmaNormsGainTheirOne) {
  auto file = core::ModelFile::open(fixture("gemma3").string(), host_.registry());
  ASSERT_TRUE(file) << file.error();
  const lpx_tensor_view* norm = file.value()->find_tensor("output_norm.weight");
  ASSERT_NE(norm, nullptr);
  ASSERT_EQ(norm->type, LPX_TENSOR_F32);
  // The fixture's norms are 0.2 * N(0, 1) around 0 (Gemma's convention): plus one, near 1.
  double mean = 0;
  for (int k = 0; k < 64; ++k) mean += double{static_cast<const float*>(norm->data)[k]};
  EXPECT_NEAR(mean / 64, 1.0, 0.15);
}

TEST_F(HfDirectory, Phi3RopeComesFromTheConfigAsLlamaCppWritesIt) {
  auto file = core::ModelFile::open(fixture("phi3").string(), host_.registry());
  ASSERT_TRUE(file) << file.error();
  const core::ModelFile& m = **file;
  EXPECT_EQ(*m.get_uint("phi3.rope.dimension_count"), 8u);  // half of each 16-dim head
  EXPECT_EQ(*m.get_uint("phi3.rope.scaling.original_context_length"), 1024u);
  EXPECT_NEAR(*m.get_float("phi3.rope.scaling.attn_factor"), std::sqrt(1 + std::log(4.0) / std::log(1024.0)), 1e-9);
  EXPECT_FALSE(m.has("phi3.rope.scaling.type"));
  for (const char* name : {"rope_factors_short.weight", "rope_factors_long.weight"}) {
    const lpx_tensor_view* t = m.find_tensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->type, LPX_TENSOR_F32);
    EXPECT_EQ(t->dims[0], 4);
  }
  EXPECT_NEAR(static_cast<const float*>(m.find_tensor("rope_factors_short.weight")->data)[0], 1.0043f, 1e-6f);
  ASSERT_NE(m.find_tensor("blk.0.attn_qkv.weight"), nullptr);
  EXPECT_EQ(m.find_tensor("blk.0.attn_qkv.weight")->dims[1], 64 + 2 * 32);
  EXPECT_EQ(m.find_tensor("blk.0.ffn_up.weight")->dims[1], 2 * 128);

  const std::string config = read_text(fixture("phi3") / "config.json");
  struct Case {
    const char* name;
    std::string config;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"phi3-yarn", replaced(config, "\"longrope\"", "\"yarn\""), "rope type 'yarn'; LPX runs Phi-3 with LongRoPE or none"},
      {"phi3-factors", replaced(config, "      1.027\n", "      1.027,\n      1.5\n"),
       "LongRoPE needs 4 short and long factors (half the rotated dims); it has 5 and 4"},
      {"phi3-odd-rotary", replaced(config, "\"partial_rotary_factor\": 0.5", "\"partial_rotary_factor\": 0.1"),
       "'partial_rotary_factor' should be a fraction of the head that rotates an even number of dims"},
  };
  for (const Case& c : cases) {
    const std::string error = refusal(variant(c.name, {{"config.json", c.config}}, "phi3"));
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.name << ": '" << error << "' does not say '" << c.expected << "'";
  }
}

TEST_F(HfDirectory, RefusesEachBrokenDirectoryNamingTheFault) {
  const std::string config = read_text(fixture("llama") / "config.json");
  const std::string tokenizer = read_text(fixture("llama") / "tokenizer.json");
  const std::string tokenizer_config = read_text(fixture("llama") / "tokenizer_config.json");
  const std::string index = read_text(fixture("llama3-sharded") / "model.safetensors.index.json");
  const std::string tensor = R"("dtype":"BF16","shape":[64],"data_offsets":[0,128]})";
  struct Case {
    const char* name;
    std::map<std::string, std::string> changes;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"no-config", {{"config.json", ""}}, "not a model directory any format plugin recognises"},
      {"config-not-json", {{"config.json", "{\"model_type\": "}}, "config.json: not valid JSON"},
      {"unknown-family", {{"config.json", replaced(config, "\"llama\"", "\"bert\"")}},
       "config.json: model_type 'bert' is not an architecture LPX runs"},
      {"mistyped-field", {{"config.json", replaced(config, "\"hidden_size\": 64", "\"hidden_size\": \"64\"")}},
       "config.json: 'hidden_size' should be a positive integer"},
      {"heads-do-not-divide", {{"config.json", replaced(config, "\"num_attention_heads\": 4", "\"num_attention_heads\": 5")}},
       "rows do not split into 5 heads"},
      {"no-weights", {{"model.safetensors", ""}}, "not a model directory"},
      {"shard-outside", {{"model.safetensors.index.json", replaced(index, "\"model-00001-of-00005.safetensors\"", "\"../x.safetensors\"")}},
       "is not a file name in the model's directory"},
      {"unknown-tensor", {{"model.safetensors", as_text(safetensors_bytes(R"({"model.vision.w":{)" + tensor + "}", 128))}},
       "model.safetensors: tensor 'model.vision.w' is not a tensor of a llama model"},
      {"integer-weights",
       {{"model.safetensors", as_text(safetensors_bytes(R"({"model.norm.weight":{"dtype":"I64","shape":[16],"data_offsets":[0,128]}})", 128))}},
       "is I64; LPX reads F32, F16 and BF16 weights"},
      {"five-dims",
       {{"model.safetensors", as_text(safetensors_bytes(R"({"model.norm.weight":{"dtype":"BF16","shape":[2,2,2,2,4],"data_offsets":[0,128]}})", 128))}},
       "has 5 dimensions"},
      {"broken-header", {{"model.safetensors", as_text(safetensors_bytes(R"({"a":1})", 0))}},
       "model.safetensors: tensor 'a': should be an object"},
      {"unigram", {{"tokenizer.json", replaced(tokenizer, "\"type\": \"BPE\"", "\"type\": \"Unigram\"")}},
       "tokenizer.json: model type 'Unigram' is not supported"},
      {"removed-split",
       {{"tokenizer.json", replaced(tokenizer, "\"type\": \"Digits\"", "\"type\": \"Split\", \"behavior\": \"Removed\", \"pattern\": {\"String\": \" \"}")}},
       "only Split with behavior Isolated"},
      {"vocab-size-too-small", {{"config.json", replaced(config, "\"vocab_size\": 512", "\"vocab_size\": 500")}},
       "tokenizer.json: 512 tokens, but config.json's vocab_size is 500"},
      {"zero-dimension",
       {{"model.safetensors", as_text(safetensors_bytes(R"({"model.norm.weight":{"dtype":"BF16","shape":[0],"data_offsets":[0,0]}})", 0))}},
       "tensor 'model.norm.weight' has a dimension of size 0"},
      {"eos-not-a-token", {{"tokenizer_config.json", replaced(tokenizer_config, "<|im_end|>", "<|nothing|>")}},
       "tokenizer_config.json: eos_token \"<|nothing|>\" is not a token"},
  };
  for (const Case& c : cases) {
    const std::string error = refusal(variant(c.name, c.changes));
    EXPECT_NE(error.find(c.expected), std::string::npos)
        << c.name << ": '" << error << "' does not say '" << c.expected << "'";
  }
}

TEST_F(HfDirectory, PadsTheVocabularyToTheEmbeddingsRows) {
  // Qwen's embedding has more rows than its tokenizer has tokens: the rest are unused ids.
  const std::string config = read_text(fixture("llama") / "config.json");
  const fs::path dir = variant("padded", {{"config.json", replaced(config, "\"vocab_size\": 512", "\"vocab_size\": 520")}});
  auto file = core::ModelFile::open(dir.string(), host_.registry());
  ASSERT_TRUE(file) << file.error();
  auto tokens = file.value()->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens);
  EXPECT_EQ(tokens->length, 520u);
  auto last = file.value()->array_element("tokenizer.ggml.tokens", 519);
  ASSERT_TRUE(last);
  EXPECT_EQ(std::string(last->string, last->length), "[PAD519]");
  auto type = file.value()->array_element("tokenizer.ggml.token_type", 519);
  ASSERT_TRUE(type);
  EXPECT_EQ(type->i, 5);  // unused
}

TEST_F(HfDirectory, ClaimsOnlyTheFilesItLoads) {
  const fs::path dir = variant("other-file", {{"consolidated.safetensors", read_text(fixture("llama") / "model.safetensors")}});
  EXPECT_NE(refusal(dir / "consolidated.safetensors").find("not a model file any format plugin recognises"),
            std::string::npos) << refusal(dir / "consolidated.safetensors");
  EXPECT_EQ(refusal(dir / "model.safetensors"), "(opened)");
}

TEST_F(HfDirectory, RefusesAnIndexThatDisagreesWithItsShards) {
  const fs::path dir = fs::path(LPX_BINARY_DIR) / "test-work" / "hf-index";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& entry : fs::directory_iterator(fixture("llama3-sharded"))) {
    fs::copy_file(entry.path(), dir / entry.path().filename());
  }
  const std::string index = read_text(dir / "model.safetensors.index.json");
  {
    std::ofstream out(dir / "model.safetensors.index.json", std::ios::trunc);
    out << replaced(index, "\"weight_map\": {", "\"weight_map\": {\"model.extra.weight\": \"model-00001-of-00005.safetensors\",");
  }
  EXPECT_NE(refusal(dir).find("model.safetensors.index.json: names 30 tensors, the shards hold 29"),
            std::string::npos) << refusal(dir);
  {
    std::ofstream out(dir / "model.safetensors.index.json", std::ios::trunc);
    out << replaced(index, "\"model.norm.weight\": \"model-00005-of-00005.safetensors\"",
                    "\"model.norm.weight\": \"model-00001-of-00005.safetensors\"");
  }
  EXPECT_NE(refusal(dir).find("tensor 'model.norm.weight' is not listed in model.safetensors.index.json"),
            std::string::npos) << refusal(dir);
}

}  // namespace
}  // namespace lpx::test
