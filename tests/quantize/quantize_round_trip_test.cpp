// The quantizer's round trip, judged by what the model then says: the default SmolLM2 (Q4_1)
// dequantized to F16 and quantized again, and the shared tiny Llama quantized, each against the
// model it came from: greedy answers token for token, and the KL divergence of the next-token
// distributions at every position of a prompt (teacher-forced), within bounds that the types'
// precision sets. (quantize_model_test.cpp holds the files to llama-quantize's bytes; this holds
// the files to their purpose.)
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine_test_support.hpp"
#include "quantize/quantize_model.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

// Mean and largest KL(p || q) over the positions of `ids`, p from `reference`, q from `other`.
struct Divergence {
  double mean = 0, largest = 0;
};

std::vector<double> softmax(const std::vector<float>& logits) {
  double top = -INFINITY;
  for (float v : logits) top = std::max(top, double{v});
  std::vector<double> p(logits.size());
  double sum = 0;
  for (std::size_t i = 0; i < p.size(); ++i) sum += p[i] = std::exp(double{logits[i]} - top);
  for (double& v : p) v /= sum;
  return p;
}

Divergence divergence(TestHost& host, const std::filesystem::path& reference, const std::filesystem::path& other,
                      const std::vector<std::int32_t>& ids) {
  ForwardRig a(host, reference, "cpu"), b(host, other, "cpu");
  Divergence d;
  for (std::int32_t id : ids) {
    const std::vector<double> p = softmax(a.feed({id}));
    const std::vector<double> q = softmax(b.feed({id}));
    double kl = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i] > 0) kl += p[i] * (std::log(p[i]) - std::log(std::max(q[i], 1e-300)));
    }
    d.mean += kl / static_cast<double>(ids.size());
    d.largest = std::max(d.largest, kl);
  }
  return d;
}

std::vector<std::int32_t> greedy(TestHost& host, const std::filesystem::path& model, const char* prompt) {
  auto engine = host.engine(model);
  lpx_request r{};
  r.prompt = prompt;
  r.max_tokens = 24;
  r.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  return generate(*engine, r).tokens;
}

std::filesystem::path quantized(const std::filesystem::path& in, const std::filesystem::path& out, const char* type,
                                bool allow_requantize = false) {
  core::QuantizeOptions o;
  o.mix = *core::parse_quant_mix(type);
  o.allow_requantize = allow_requantize;
  auto done = core::quantize_model(in.string(), out.string(), o);
  EXPECT_TRUE(done) << type << ": " << (done ? "" : done.error().message);
  return out;
}

constexpr const char* kPrompt = "The quick brown fox jumps over the lazy dog. Small models decode fast because";

TEST(QuantizeRoundTrip, SmolLM2ThroughF16AndBackSaysWhatItSaid) {
  if (!std::filesystem::exists(smollm2_path())) GTEST_SKIP() << "run tools/setup.sh first";
  TestHost host;
  TempDir dir;
  const auto f16 = quantized(smollm2_path(), dir / "f16.gguf", "F16", true);
  const auto q4_1 = quantized(f16, dir / "q4_1.gguf", "Q4_1");
  const auto q8_0 = quantized(f16, dir / "q8_0.gguf", "Q8_0");
  const auto q4_k_m = quantized(f16, dir / "q4_k_m.gguf", "Q4_K_M");
  auto engine = host.engine(smollm2_path());
  auto ids = engine->tokenizer().encode(kPrompt, {});
  ASSERT_TRUE(ids);
  engine.reset();

  // F16 holds Q4_1's values exactly, and Q4_1 of those values gives back the same blocks up to
  // the rounding of each block's scale and minimum: the same answers.
  const auto original = greedy(host, smollm2_path(), kPrompt);
  EXPECT_EQ(greedy(host, f16, kPrompt), original);
  EXPECT_EQ(greedy(host, q4_1, kPrompt), original);
  const Divergence f16_kl = divergence(host, smollm2_path(), f16, *ids);
  const Divergence back_kl = divergence(host, smollm2_path(), q4_1, *ids);
  const Divergence q8_kl = divergence(host, f16, q8_0, *ids);
  const Divergence q4_kl = divergence(host, f16, q4_k_m, *ids);
  std::cout << "KL vs the Q4_1 original: F16 mean " << f16_kl.mean << " max " << f16_kl.largest << "; Q4_1 again mean "
            << back_kl.mean << " max " << back_kl.largest << "; vs F16: Q8_0 mean " << q8_kl.mean << " max "
            << q8_kl.largest << ", Q4_K_M mean " << q4_kl.mean << " max " << q4_kl.largest << "\n";
  EXPECT_LT(f16_kl.mean, 1e-4);  // measured 7e-6: the activations' rounding, not the weights
  EXPECT_LT(back_kl.mean, 1e-4);  // measured 0: the same blocks again
  // From F16, a finer type stays closer (measured 4.6e-3 and several times that).
  EXPECT_LT(q8_kl.mean, 1e-2);
  EXPECT_LT(q8_kl.mean, q4_kl.mean);
  EXPECT_LT(q4_kl.mean, 0.3);  // measured 0.14: Q4_1's grid quantized again to another grid
}

TEST(QuantizeRoundTrip, TheTinyLlamaKeepsWhatItCannotQuantizeAndSaysTheSame) {
  if (!std::filesystem::exists(tiny_llama_path())) GTEST_SKIP() << "the shared tiny model is missing";
  TestHost host;
  TempDir dir;
  auto engine = host.engine(tiny_llama_path());
  auto ids = engine->tokenizer().encode(kPrompt, {});
  ASSERT_TRUE(ids);
  engine.reset();
  // Its rows are 8 long, too short for any block, except ffn_down's 32: llama-quantize's
  // fallbacks keep every tensor F16 but ffn_down, which both types write as Q8_0. The model must
  // answer exactly as before.
  const auto original = greedy(host, tiny_llama_path(), kPrompt);
  for (const char* type : {"Q8_0", "Q4_K_M"}) {
    const auto out = quantized(tiny_llama_path(), dir / (std::string(type) + ".gguf"), type);
    const Divergence d = divergence(host, tiny_llama_path(), out, *ids);
    std::cout << "tiny llama " << type << ": KL mean " << d.mean << " max " << d.largest << "\n";
    EXPECT_LT(d.mean, 1e-6) << type;
    EXPECT_EQ(greedy(host, out, kPrompt), original) << type;
  }
}

}  // namespace
}  // namespace lpx::test
