// `lpx-pipeline synth`: GGUF files with a named model's exact shapes and random weights, valid
// for `inspect` and runnable by the engine; unknown names and types are usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "quantize/gguf_layout.hpp"
#include "support/test_support.hpp"
#include "synth/model_shapes.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(CliSynth, EveryTypeOfSmolLm2ShapeIsAValidRunnableModel) {
  TempDir dir;
  for (const char* type : {"F16", "BF16", "Q8_0", "Q4_0", "Q4_1", "Q4_K"}) {
    const std::string path = (dir / (std::string(type) + ".gguf")).string();
    CommandResult r = run_lpx({"synth", "--like", "smollm2-135m", "--type", type, "-o", path});
    ASSERT_EQ(r.exit_code, 0) << type << ": " << r.err << r.out;
    // The inspect summary printed after writing: the real model's shapes.
    EXPECT_TRUE(contains(r.out, "llama: 30 layers, embedding 576, feed-forward 1536, heads 9 (kv 3)")) << r.out;
    EXPECT_TRUE(contains(r.out, "49152 tokens")) << r.out;
    EXPECT_TRUE(contains(r.out, "134.5 M")) << r.out;
    CommandResult g = run_lpx({"generate", "--model", path, "--prompt", "Hello", "--max-tokens", "4",
                               "--temperature", "0", "--ids"});
    ASSERT_EQ(g.exit_code, 0) << type << ": " << g.err;
    EXPECT_EQ(std::count(g.out.begin(), g.out.end(), ','), 3) << g.out;
  }
}

TEST(CliSynth, TheSameSeedWritesTheSameFile) {
  TempDir dir;
  const std::string a = (dir / "a.gguf").string(), b = (dir / "b.gguf").string(), c = (dir / "c.gguf").string();
  ASSERT_EQ(run_lpx({"synth", "--like", "smollm2-135m", "--type", "Q4_0", "-o", a}).exit_code, 0);
  ASSERT_EQ(run_lpx({"synth", "--like", "smollm2-135m", "--type", "Q4_0", "-o", b}).exit_code, 0);
  ASSERT_EQ(run_lpx({"synth", "--like", "smollm2-135m", "--type", "Q4_0", "-o", c, "--seed", "2"}).exit_code, 0);
  EXPECT_EQ(read_file(a), read_file(b));
  EXPECT_NE(read_file(a), read_file(c));
}

TEST(CliSynth, QwenShapesCarryAttentionBiasesAndTheirVocabulary) {
  TempDir dir;
  const std::string path = (dir / "q.gguf").string();
  CommandResult r = run_lpx({"synth", "--like", "qwen2.5-0.5b", "--type", "Q4_K", "-o", path});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "qwen2: 24 layers, embedding 896, feed-forward 4864, heads 14 (kv 2)")) << r.out;
  EXPECT_TRUE(contains(r.out, "151936 tokens")) << r.out;
  EXPECT_TRUE(contains(r.out, "Q5_0")) << "rows of 896 are not whole Q4_K super-blocks: " << r.out;
}

TEST(CliSynth, ShapesHaveThePublishedParameterCounts) {
  // Published sizes (embeddings tied), to 1 %.
  const std::pair<const char*, double> published[] = {
      {"smollm2-135m", 134.5e6}, {"smollm2-360m", 361.8e6}, {"smollm2-1.7b", 1711.4e6},
      {"qwen2.5-0.5b", 494.0e6}, {"qwen2.5-1.5b", 1543.7e6}, {"llama-3.2-1b", 1235.8e6},
      {"llama-3.2-3b", 3212.7e6}, {"gemma3-270m", 268.1e6},   {"gemma3-1b", 999.9e6},
      {"gemma2-2b", 2614.3e6},    {"qwen3-0.6b", 596.0e6},    {"qwen3-1.7b", 1720.6e6},
      {"phi3-mini", 3821.1e6},    {"smollm3-3b", 3075.1e6},   {"granite-3.3-2b", 2533.5e6}};
  for (const auto& [name, count] : published) {
    const core::synth::ModelShape* shape = core::synth::find_model_shape(name);
    ASSERT_NE(shape, nullptr) << name;
    EXPECT_NEAR(static_cast<double>(shape->parameters()), count, count * 0.01) << name;
  }
}

// The tied output head is typed as llama-quantize types it: Q8_0 where rows are not whole
// 256-element super-blocks (SmolLM2's 576, as in the real Q4_1 file), Q6_K where they are; a
// file of F16, BF16 or Q8_0 keeps its type. The Q6_K blocks are well formed: the model runs.
TEST(CliSynth, TheOutputHeadIsTypedAsLlamaQuantizeTypesIt) {
  TempDir dir;
  const std::string q41 = (dir / "q41.gguf").string();
  CommandResult r = run_lpx({"synth", "--like", "smollm2-135m", "--type", "Q4_1", "-o", q41});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(contains(r.out, "(f32 61, q4_1 210, q8_0 1)")) << r.out;  // the real file's mix
  const std::string f16 = (dir / "f16.gguf").string();
  r = run_lpx({"synth", "--like", "smollm2-135m", "--type", "F16", "-o", f16});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_FALSE(contains(r.out, "q8_0")) << r.out;

  core::synth::ModelShape shape = *core::synth::find_model_shape("smollm2-135m");
  shape.n_embd = 256;  // whole super-blocks: a Q6_K head
  shape.n_head = 4;
  shape.n_head_kv = 2;
  shape.n_ff = 512;
  shape.n_layer = 2;
  const std::string q6 = (dir / "q6.gguf").string();
  auto written = core::synth::write_synthetic_model(shape, LPX_TENSOR_Q4_0, 1, q6);
  ASSERT_TRUE(written.has_value()) << written.error();
  r = run_lpx({"inspect", q6});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "q6_k 1")) << r.out;
  CommandResult g = run_lpx({"generate", "--model", q6, "--prompt", "Hello", "--max-tokens", "4",
                             "--temperature", "0", "--ids"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(std::count(g.out.begin(), g.out.end(), ','), 3) << g.out;
}

// Every family's shape, cut to a few layers (--layers), is a file the engine validates and runs:
// its tensors are the ones the architecture reads (fused, q/k norms, post norms, LongRoPE factors,
// a separate head) and its metadata is read back (gemma3: window and local rope base).
TEST(CliSynth, EveryFamilyShapeCutToFewLayersRuns) {
  TempDir dir;
  for (const char* like : {"gemma3-270m", "gemma2-2b", "qwen3-0.6b", "phi3-mini", "smollm3-3b",
                           "granite-3.3-2b"}) {
    const std::string path = (dir / (std::string(like) + ".gguf")).string();
    CommandResult r = run_lpx({"synth", "--like", like, "--type", "Q4_0", "--layers", "2", "-o", path});
    ASSERT_EQ(r.exit_code, 0) << like << ": " << r.err << r.out;
    EXPECT_TRUE(contains(r.out, ", 2 layers, ")) << r.out;
    EXPECT_TRUE(contains(r.out, "runs here:      yes")) << r.out;
    CommandResult g = run_lpx({"generate", "--model", path, "--prompt", "Hello", "--max-tokens",
                               "3", "--temperature", "0", "--ids", "--context", "64"});
    ASSERT_EQ(g.exit_code, 0) << like << ": " << g.err;
    EXPECT_EQ(std::count(g.out.begin(), g.out.end(), ','), 2) << like << ": " << g.out;
    std::filesystem::remove(path);
  }
}

// Each tensor's ggml type, read back from a written file.
std::map<std::string, std::uint32_t> tensor_types(const core::GgufLayout& layout) {
  std::map<std::string, std::uint32_t> types;
  for (const core::GgufTensor& t : layout.tensors) types[t.name] = t.ggml_type;
  return types;
}

// What llama.cpp 0.3.36's loader (llama_model::load_hparams) asks of every shape's metadata before
// it loads a tensor: the keys it requires, and a rope scaling type it knows ("linear" when absent;
// an unknown one fails GGML_ASSERT(rope_scaling_type_train != UNSPECIFIED), as "llama3" did).
// Llama 3 shapes carry their rope divisors as convert_hf_to_gguf.py writes them: rope_freqs.weight,
// f32, head_dim / 2 long, 1 for the fastest rotations and the scaling factor 32 for the slowest.
TEST(CliSynth, EveryShapesMetadataPassesLlamaCppsLoaderChecks) {
  TempDir dir;
  for (const core::synth::ModelShape& known : core::synth::model_shapes()) {
    core::synth::ModelShape shape = known;
    shape.n_layer = 1;
    shape.n_vocab = 512;  // the tokens' count does not enter these checks; keeps the file small
    const std::string path = (dir / (std::string(shape.name) + ".gguf")).string();
    auto written = core::synth::write_synthetic_model(shape, LPX_TENSOR_Q4_0, 1, path);
    ASSERT_TRUE(written.has_value()) << shape.name << ": " << written.error();
    auto layout = core::read_gguf_layout(path);
    ASSERT_TRUE(layout.has_value()) << layout.error();
    const std::string a = shape.architecture;
    for (const std::string key : {"context_length", "embedding_length", "block_count", "feed_forward_length",
                                  "attention.head_count", "attention.head_count_kv",
                                  "attention.layer_norm_rms_epsilon", "rope.freq_base"}) {
      EXPECT_NE(layout->find(a + "." + key), nullptr) << shape.name << ": " << a << "." << key;
    }
    if (const core::GgufEntry* scaling = layout->find(a + ".rope.scaling.type")) {
      auto value = core::read_gguf_string(*layout, *scaling);
      ASSERT_TRUE(value.has_value() && value->has_value()) << shape.name;
      EXPECT_TRUE(**value == "none" || **value == "linear" || **value == "yarn" || **value == "longrope")
          << shape.name << ": rope.scaling.type " << **value;
    }
    const auto freqs = std::find_if(layout->tensors.begin(), layout->tensors.end(),
                                    [](const core::GgufTensor& t) { return t.name == "rope_freqs.weight"; });
    ASSERT_EQ(freqs != layout->tensors.end(), shape.llama3_rope) << shape.name;
    if (shape.llama3_rope) {
      const std::size_t pairs = shape.head_dim() / 2;
      ASSERT_EQ(freqs->dims, std::vector<std::uint64_t>{pairs}) << shape.name;
      EXPECT_EQ(freqs->ggml_type, 0u);  // f32
      const std::string bytes = read_file(path);
      std::vector<float> divisors(pairs);
      std::memcpy(divisors.data(), bytes.data() + layout->data_start + freqs->offset, pairs * 4);
      EXPECT_EQ(divisors.front(), 1.0f) << shape.name;
      EXPECT_EQ(divisors.back(), 32.0f) << shape.name;
      EXPECT_TRUE(std::is_sorted(divisors.begin(), divisors.end())) << shape.name;
    }
    std::filesystem::remove(path);
  }
}

// synth --type Q4_K_M types every tensor as `quantize ... Q4_K_M` types the same shape written in
// F16 (llama-quantize's mix: Q6_K head, Q6_K for some attn_v and ffn_down layers, Q5_0 where rows
// are not whole super-blocks), and the file runs.
TEST(CliSynth, Q4KMIsTypedAsQuantizeTypesIt) {
  TempDir dir;
  const std::string mix = (dir / "mix.gguf").string(), f16 = (dir / "f16.gguf").string(),
                    quantized = (dir / "quantized.gguf").string();
  core::synth::ModelShape shape = *core::synth::find_model_shape("qwen3-0.6b");
  shape.n_layer = 8;
  shape.n_vocab = 1024;  // a small head: the rules do not depend on its height
  const auto q4_k_m = core::synth::synth_type("q4_k_m");
  ASSERT_TRUE(q4_k_m.has_value());
  auto written = core::synth::write_synthetic_model(shape, *q4_k_m, 1, mix);
  ASSERT_TRUE(written.has_value()) << written.error();
  ASSERT_TRUE(core::synth::write_synthetic_model(shape, LPX_TENSOR_F16, 1, f16).has_value());
  CommandResult r = run_lpx({"quantize", f16, quantized, "--type", "Q4_K_M"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto synthesized = core::read_gguf_layout(mix);
  auto expected = core::read_gguf_layout(quantized);
  ASSERT_TRUE(synthesized.has_value() && expected.has_value());
  const auto types = tensor_types(*synthesized);
  EXPECT_EQ(types, tensor_types(*expected));
  std::map<std::uint32_t, int> counts;
  for (const auto& [name, type] : types) ++counts[type];
  EXPECT_GT(counts[12], 0);  // Q4_K
  EXPECT_GT(counts[14], 0);  // Q6_K: the head, some attn_v and ffn_down
  CommandResult g = run_lpx({"generate", "--model", mix, "--prompt", "Hello", "--max-tokens", "3",
                             "--temperature", "0", "--ids", "--context", "64"});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  EXPECT_EQ(std::count(g.out.begin(), g.out.end(), ','), 2) << g.out;
}

TEST(CliSynth, UnknownNamesAndTypesAreUsageErrors) {
  TempDir dir;
  CommandResult r = run_lpx({"synth", "--like", "gpt-5", "--type", "Q8_0", "-o", (dir / "x.gguf").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "smollm2-135m")) << r.err;
  r = run_lpx({"synth", "--like", "smollm2-135m", "--type", "Q3_K", "-o", (dir / "x.gguf").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.err, "Q4_K")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "x.gguf"));
}

// bench's (and the GPU tests') model argument: files as they are, synth:NAME:TYPE written once
// into the temp directory, whole, and reused; bad specs say what is wrong.
TEST(SynthSpec, ResolvesFilesAndWritesSyntheticModelsOnce) {
  auto file = core::synth::resolve_model_spec("some/model.gguf");
  ASSERT_TRUE(file.has_value());
  EXPECT_EQ(*file, "some/model.gguf");

  for (const char* bad : {"synth:smollm2-135m", "synth:no-such-model:Q8_0", "synth:smollm2-135m:Q2_K"}) {
    auto resolved = core::synth::resolve_model_spec(bad);
    ASSERT_FALSE(resolved.has_value()) << bad;
    EXPECT_TRUE(contains(resolved.error().message, bad)) << resolved.error().message;
  }

  // A temp directory of its own: other tests use the shared one's synthetic models.
  TempDir dir;
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir != nullptr ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.path().c_str(), 1);
  struct Restore {
    bool had;
    std::string value;
    ~Restore() { had ? ::setenv("TMPDIR", value.c_str(), 1) : ::unsetenv("TMPDIR"); }
  } restore{old_tmpdir != nullptr, saved};
  const std::filesystem::path expected = dir / "lpx-synth-v4-smollm2-135m-Q4_0.gguf";
  auto written = core::synth::resolve_model_spec("synth:smollm2-135m:Q4_0");
  ASSERT_TRUE(written.has_value()) << written.error();
  EXPECT_EQ(*written, expected.string());
  const auto size = std::filesystem::file_size(expected);
  EXPECT_GT(size, 50u << 20);
  // No partial file left beside it.
  for (const auto& entry : std::filesystem::directory_iterator(expected.parent_path())) {
    EXPECT_EQ(entry.path().string().find(expected.string() + ".partial"), std::string::npos)
        << entry.path();
  }
  // Reused, not rewritten: a file already there is returned as it is.
  std::filesystem::resize_file(expected, 1234);
  auto again = core::synth::resolve_model_spec("synth:smollm2-135m:Q4_0");
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(std::filesystem::file_size(expected), 1234u);
}

}  // namespace
}  // namespace lpx::test
