// `convert`: a Hugging Face directory written as GGUF keeps every metadata value and tensor byte
// (so the GGUF runs as the directory does), quantizing while converting writes exactly what
// `quantize` writes from the converted file (and so what llama-quantize writes), and a failed or
// stopped conversion leaves no file.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/engine_test_support.hpp"
#include "model/model_file.hpp"
#include "quantize/convert_model.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

fs::path fixture(const std::string& family) {
  return fs::path(LPX_SOURCE_DIR) / "tests/fixtures/hf" / family;
}

std::string bytes_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The value under `key` as text, whatever its width: what a conversion must keep.
std::string value_text(const core::ModelFile& f, const std::string& key) {
  const auto v = f.find(key);
  if (!v) return "(absent)";
  switch (v->type) {
    case LPX_VALUE_UINT: case LPX_VALUE_BOOL: return std::to_string(v->u);
    case LPX_VALUE_INT: return std::to_string(v->i);
    case LPX_VALUE_FLOAT: return std::to_string(static_cast<float>(v->f));  // GGUF keeps f32
    case LPX_VALUE_STRING: return std::string(v->string, v->length);
    default: break;
  }
  std::string out = "[";
  for (std::uint64_t k = 0; k < v->length; ++k) {
    const auto e = f.array_element(key, k);
    if (!e) return "(unreadable)";
    out += e->type == LPX_VALUE_STRING  ? std::string(e->string, e->length)
           : e->type == LPX_VALUE_FLOAT ? std::to_string(static_cast<float>(e->f))
           : e->type == LPX_VALUE_INT   ? std::to_string(e->i)
                                        : std::to_string(e->u);
    out += ",";
  }
  return out + "]";
}

class Convert : public ::testing::TestWithParam<const char*> {
 protected:
  TestHost host_;
  TempDir dir_;
};

TEST_P(Convert, KeepsEveryMetadataValueAndTensorByte) {
  auto source = core::ModelFile::open(fixture(GetParam()).string(), host_.registry());
  ASSERT_TRUE(source) << source.error();
  const std::string out = (dir_ / "model.gguf").string();
  auto summary = core::convert_model(**source, out, {});
  ASSERT_TRUE(summary) << summary.error();
  EXPECT_EQ(summary->converted, 0u);
  auto gguf = core::ModelFile::open(out, host_.registry());
  ASSERT_TRUE(gguf) << gguf.error();
  EXPECT_EQ(gguf.value()->format_name(), "gguf");

  auto keys = source.value()->metadata_keys();
  ASSERT_TRUE(keys) << keys.error();
  ASSERT_GT(keys->size(), 20u);
  for (const std::string& key : *keys) {
    EXPECT_EQ(value_text(**gguf, key), value_text(**source, key)) << key;
  }
  ASSERT_EQ(gguf.value()->tensors().size(), source.value()->tensors().size());
  for (const lpx_tensor_view& t : source.value()->tensors()) {
    const lpx_tensor_view* c = gguf.value()->find_tensor(t.name);
    ASSERT_NE(c, nullptr) << t.name;
    EXPECT_EQ(c->type, t.type) << t.name;
    EXPECT_EQ(std::vector<std::int64_t>(c->dims, c->dims + c->n_dims),
              std::vector<std::int64_t>(t.dims, t.dims + t.n_dims)) << t.name;
    ASSERT_EQ(c->size_bytes, t.size_bytes) << t.name;
    EXPECT_EQ(std::memcmp(c->data, t.data, t.size_bytes), 0) << t.name;
  }
}

TEST_P(Convert, QuantizingWhileConvertingWritesWhatQuantizeWrites) {
  auto source = core::ModelFile::open(fixture(GetParam()).string(), host_.registry());
  ASSERT_TRUE(source) << source.error();
  const std::string plain = (dir_ / "plain.gguf").string();
  ASSERT_TRUE(core::convert_model(**source, plain, {}));
  for (const core::QuantMix mix : {core::QuantMix::Q4_K_M, core::QuantMix::Q8_0, core::QuantMix::Q5_1}) {
    const std::string direct = (dir_ / "direct.gguf").string();
    const std::string twice = (dir_ / "twice.gguf").string();
    core::ConvertOptions convert;
    convert.mix = mix;
    auto converted = core::convert_model(**source, direct, convert);
    ASSERT_TRUE(converted) << converted.error();
    EXPECT_GT(converted->converted, 0u);
    core::QuantizeOptions quantize;
    quantize.mix = mix;
    auto quantized = core::quantize_model(plain, twice, quantize);
    ASSERT_TRUE(quantized) << quantized.error();
    EXPECT_TRUE(bytes_of(direct) == bytes_of(twice)) << core::quant_mix_name(mix);
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Convert,
                         ::testing::Values("llama", "llama3-sharded", "mistral", "granite", "smollm3", "qwen2",
                                           "qwen3", "gemma2", "gemma3", "phi3"),
                         [](const ::testing::TestParamInfo<const char*>& param) {
                           std::string name = param.param;
                           for (char& c : name) c = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return name;
                         });

TEST(ConvertGguf, RoundTripsTheSharedTinyLlama) {
  TestHost host;
  TempDir dir;
  auto source = core::ModelFile::open(tiny_llama_path().string(), host.registry());
  ASSERT_TRUE(source) << source.error();
  const std::string out = (dir / "tiny.gguf").string();
  ASSERT_TRUE(core::convert_model(**source, out, {}));
  auto copy = core::ModelFile::open(out, host.registry());
  ASSERT_TRUE(copy) << copy.error();
  auto keys = source.value()->metadata_keys();
  ASSERT_TRUE(keys);
  for (const std::string& key : *keys) EXPECT_EQ(value_text(**copy, key), value_text(**source, key)) << key;
  ASSERT_EQ(copy.value()->tensors().size(), source.value()->tensors().size());
}

TEST(ConvertGguf, AStoppedConversionLeavesNoFile) {
  TestHost host;
  TempDir dir;
  auto source = core::ModelFile::open(fixture("llama").string(), host.registry());
  ASSERT_TRUE(source) << source.error();
  std::atomic<bool> stop{true};
  core::ConvertOptions options;
  options.stop = &stop;
  const std::string out = (dir / "stopped.gguf").string();
  auto result = core::convert_model(**source, out, options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, LPX_ERR_CANCELLED);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".partial"));
  auto nowhere = core::convert_model(**source, (dir / "no/such/dir/x.gguf").string(), {});
  ASSERT_FALSE(nowhere);
  EXPECT_EQ(nowhere.error().code, LPX_ERR_IO);
}

}  // namespace
}  // namespace lpx::test
