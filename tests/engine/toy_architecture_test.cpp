// An architecture added by one file, as the next model family will be: "toy", registered here
// and nowhere else, maps its model file onto the transformer description with every feature
// ABI 2.0 defines (fused and split projections, biases, q/k norms, post-norms, a sliding
// window, per-layer rope with frequency factors and an attention factor, a layer without rope,
// GeGLU, embedding/residual/logit scales, attention and final soft caps). The engine runs it on
// cpu-scalar and cpu unchanged, bit-identical to each other and within f16-rounding of a
// straightforward double-precision reading of lpx/kinds/transformer.h written out below; a
// backend that lacks the features (test-device, which runs only what Llama and Qwen2 need) is refused before
// anything is loaded, with the missing features named.
#include <gtest/gtest.h>

#include <atomic>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "engine/engine_test_support.hpp"
#include "lpx/cpp/model_features.hpp"
#include "model/architecture.hpp"
#include "model/model_validation.hpp"
#include "model/tensor_lookup.hpp"
#include "support/test_support.hpp"
#include "quantize/gguf_writer.hpp"

namespace lpx::test {
namespace {

constexpr std::uint32_t kEmbd = 32, kHeads = 4, kKvHeads = 2, kHeadDim = 8, kFf = 24;
constexpr std::uint32_t kVocab = 48, kLayers = 3, kRot = 8, kWindow = 4;
constexpr std::uint32_t kQ = kHeads * kHeadDim, kKv = kKvHeads * kHeadDim;
// Exact in float: the description holds floats, the reference reads the same values as doubles.
constexpr double kEps = 1.0 / 65536, kAttentionCap = 3.0, kFinalCap = 2.0;
constexpr double kEmbeddingScale = 1.5, kResidualScale = 0.75, kLogitScale = 0.875;
constexpr double kLayer1Base = 500.0, kLayer1AttnFactor = 1.125;

std::string blk(std::uint32_t l, const char* name) {
  return "blk." + std::to_string(l) + "." + name;
}

// --- the architecture: this is all a new family needs in the core -----------------------------

std::vector<core::ExpectedTensor> toy_tensors(const core::Hyperparameters&) {
  std::vector<core::ExpectedTensor> t = {
      {"token_embd.weight", {kEmbd, kVocab}},    {"output_norm.weight", {kEmbd}},
      {"output.weight", {kEmbd, kVocab}},         {"rope_freqs.weight", {kRot / 2}}};
  for (std::uint32_t l = 0; l < kLayers; ++l) {
    t.push_back({blk(l, "attn_norm.weight"), {kEmbd}});
    t.push_back({blk(l, "attn_output.weight"), {kQ, kEmbd}});
    t.push_back({blk(l, "ffn_norm.weight"), {kEmbd}});
    t.push_back({blk(l, "ffn_down.weight"), {kFf, kEmbd}});
    if (l == 0) {
      t.push_back({blk(l, "attn_qkv.weight"), {kEmbd, kQ + 2 * kKv}});
      t.push_back({blk(l, "ffn_gate_up.weight"), {kEmbd, 2 * kFf}});
    } else {
      t.push_back({blk(l, "attn_q.weight"), {kEmbd, kQ}});
      t.push_back({blk(l, "attn_k.weight"), {kEmbd, kKv}});
      t.push_back({blk(l, "attn_v.weight"), {kEmbd, kKv}});
      t.push_back({blk(l, "ffn_gate.weight"), {kEmbd, kFf}});
      t.push_back({blk(l, "ffn_up.weight"), {kEmbd, kFf}});
    }
    if (l < 2) {
      t.push_back({blk(l, "attn_q_norm.weight"), {kHeadDim}});
      t.push_back({blk(l, "attn_k_norm.weight"), {kHeadDim}});
      t.push_back({blk(l, "post_attention_norm.weight"), {kEmbd}});
      t.push_back({blk(l, "post_ffw_norm.weight"), {kEmbd}});
    } else {
      t.push_back({blk(l, "attn_q.bias"), {kQ}});
      t.push_back({blk(l, "attn_k.bias"), {kKv}});
      t.push_back({blk(l, "attn_v.bias"), {kKv}});
    }
  }
  return t;
}

core::Expected<core::TransformerModel> toy_describe(const core::ModelFile& file,
                                                    const core::Hyperparameters& h,
                                                    const core::RunShape&) {
  auto window = file.get_uint("toy.attention.sliding_window");
  if (!window) return core::unexpected(window.error());
  // A test-only key: the window on every layer, not only on layer 0 (a model whose cache can
  // give back what falls out of every window).
  const bool window_everywhere = file.get_uint("toy.attention.window_every_layer").value_or(0) != 0;
  core::TransformerModel model = core::start_description("toy", h);
  lpx_transformer_desc& d = model.desc();
  d.activation = LPX_ACTIVATION_GELU_TANH;
  d.attention_softcap = static_cast<float>(kAttentionCap);
  d.final_softcap = static_cast<float>(kFinalCap);
  d.embedding_scale = static_cast<float>(kEmbeddingScale);
  d.residual_scale = static_cast<float>(kResidualScale);
  d.logit_scale = static_cast<float>(kLogitScale);
  core::TensorLookup t(file);
  d.token_embd = t.required("token_embd.weight");
  d.output_norm = t.required("output_norm.weight");
  d.output = t.required("output.weight");
  const lpx_tensor_view* factors = t.required("rope_freqs.weight");
  for (std::uint32_t l = 0; l < h.n_layer; ++l) {
    lpx_transformer_layer layer = core::new_layer();
    layer.attn_norm = t.required(blk(l, "attn_norm.weight"));
    layer.wo = t.required(blk(l, "attn_output.weight"));
    layer.ffn_norm = t.required(blk(l, "ffn_norm.weight"));
    layer.ffn_down = t.required(blk(l, "ffn_down.weight"));
    if (l == 0 || window_everywhere) layer.window = static_cast<std::uint32_t>(*window);
    if (l == 0) {
      layer.wqkv = t.required(blk(l, "attn_qkv.weight"));
      layer.ffn_gate_up = t.required(blk(l, "ffn_gate_up.weight"));
      lpx_rope_params rope = core::new_rope();
      rope.mode = LPX_ROPE_NEOX;
      rope.n_rot = h.n_rot;
      rope.freq_base = static_cast<float>(h.rope_freq_base);
      layer.rope = model.keep(rope);
    } else {
      layer.wq = t.required(blk(l, "attn_q.weight"));
      layer.wk = t.required(blk(l, "attn_k.weight"));
      layer.wv = t.required(blk(l, "attn_v.weight"));
      layer.ffn_gate = t.required(blk(l, "ffn_gate.weight"));
      layer.ffn_up = t.required(blk(l, "ffn_up.weight"));
    }
    if (l == 1) {
      lpx_rope_params rope = core::new_rope();
      rope.mode = LPX_ROPE_NORMAL;
      rope.n_rot = h.n_rot;
      rope.freq_base = static_cast<float>(kLayer1Base);
      rope.freq_factors = factors ? static_cast<const float*>(factors->data) : nullptr;
      rope.attn_factor = static_cast<float>(kLayer1AttnFactor);
      layer.rope = model.keep(rope);
    }
    if (l < 2) {
      layer.q_norm = t.required(blk(l, "attn_q_norm.weight"));
      layer.k_norm = t.required(blk(l, "attn_k_norm.weight"));
      layer.post_attention_norm = t.required(blk(l, "post_attention_norm.weight"));
      layer.post_ffn_norm = t.required(blk(l, "post_ffw_norm.weight"));
    } else {  // layer 2: no rope at all, biases
      layer.bq = t.required(blk(l, "attn_q.bias"));
      layer.bk = t.required(blk(l, "attn_k.bias"));
      layer.bv = t.required(blk(l, "attn_v.bias"));
    }
    model.layers().push_back(layer);
  }
  if (!t.error().empty()) return core::invalid_argument(t.error());
  if (auto ok = model.finish(); !ok) return core::unexpected(ok.error());
  return model;
}

const core::Architecture kToy{"toy", &toy_tensors, &toy_describe};

// --- its model file, with weights the reference below reads too ------------------------------

struct ToyWeights {
  std::map<std::string, std::vector<float>> tensors;
  const std::vector<float>& operator[](const std::string& name) const { return tensors.at(name); }
};

ToyWeights make_weights() {
  ToyWeights w;
  std::uint64_t state = 0x9E3779B97F4A7C15ull;
  auto uniform = [&](float scale) {  // xorshift: deterministic and good enough for weights
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (static_cast<float>(state >> 40) / 16777216.0f * 2.0f - 1.0f) * scale;
  };
  for (const core::ExpectedTensor& t : toy_tensors({})) {
    std::size_t n = 1;
    for (std::int64_t d : t.dims) n *= static_cast<std::size_t>(d);
    std::vector<float>& v = w.tensors[t.name];
    v.resize(n);
    const bool norm = t.dims.size() == 1 && t.name.find("bias") == std::string::npos;
    for (float& x : v) {
      if (t.name == "rope_freqs.weight") {
        x = 1.0f + std::abs(uniform(3.0f));
      } else if (norm) {
        x = 1.0f + uniform(0.25f);
      } else if (t.dims.size() == 1) {
        x = uniform(0.2f);
      } else {
        x = uniform(t.name == "token_embd.weight" ? 1.0f
                                                  : 1.8f / std::sqrt(static_cast<float>(t.dims[0])));
      }
    }
  }
  return w;
}

void write_toy(const std::string& path, const ToyWeights& w, bool with_window_key = true,
               bool window_every_layer = false) {
  core::GgufWriter g;
  g.add_string("general.architecture", "toy");
  g.add_u32("toy.block_count", kLayers);
  g.add_u32("toy.embedding_length", kEmbd);
  g.add_u32("toy.feed_forward_length", kFf);
  g.add_u32("toy.attention.head_count", kHeads);
  g.add_u32("toy.attention.head_count_kv", kKvHeads);
  g.add_u32("toy.context_length", 64);
  g.add_u32("toy.rope.dimension_count", kRot);
  g.add_f32("toy.rope.freq_base", 10000.0f);
  g.add_f32("toy.attention.layer_norm_rms_epsilon", static_cast<float>(kEps));
  if (with_window_key) g.add_u32("toy.attention.sliding_window", kWindow);
  if (window_every_layer) g.add_u32("toy.attention.window_every_layer", 1);
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<std::int32_t> types;
  for (std::uint32_t t = 0; t < kVocab; ++t) {
    tokens.push_back(t < 3 ? std::string(t == 0 ? "<unk>" : t == 1 ? "<s>" : "</s>")
                           : "\xe2\x96\x81tok" + std::to_string(t));
    scores.push_back(-static_cast<float>(t));
    types.push_back(t == 0 ? 2 : t < 3 ? 3 : 1);
  }
  g.add_string("tokenizer.ggml.model", "llama");
  g.add_strings("tokenizer.ggml.tokens", tokens);
  g.add_f32s("tokenizer.ggml.scores", scores);
  g.add_i32s("tokenizer.ggml.token_type", types);
  g.add_u32("tokenizer.ggml.bos_token_id", 1);
  g.add_u32("tokenizer.ggml.eos_token_id", 2);
  for (const core::ExpectedTensor& t : toy_tensors({})) {
    const std::vector<float>& values = w[t.name];
    std::vector<std::uint64_t> dims(t.dims.begin(), t.dims.end());
    const std::uint64_t columns = dims[0];
    g.add_tensor(t.name, 0, dims, columns * 4,
                 [&values, columns](std::uint64_t first, std::uint64_t n, std::uint8_t* out) {
                   std::memcpy(out, values.data() + first * columns, n * columns * 4);
                 });
  }
  auto written = g.write(path);
  ASSERT_TRUE(written.has_value()) << written.error();
}

// --- the description's step, read plainly, in double -------------------------------------------

using Vec = std::vector<double>;

Vec matvec(const std::vector<float>& w, std::size_t rows, std::size_t columns, const Vec& x,
           std::size_t first_row = 0) {
  Vec y(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t c = 0; c < columns; ++c) sum += double{w[(first_row + r) * columns + c]} * x[c];
    y[r] = sum;
  }
  return y;
}

Vec rms_norm(const Vec& x, const float* weight, std::size_t offset, std::size_t n) {
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += x[offset + i] * x[offset + i];
  const double scale = 1.0 / std::sqrt(mean / static_cast<double>(n) + kEps);
  Vec out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = x[offset + i] * scale * double{weight[i]};
  return out;
}

void norm_heads(Vec& x, std::size_t heads, const std::vector<float>& weight) {
  for (std::size_t h = 0; h < heads; ++h) {
    const Vec n = rms_norm(x, weight.data(), h * kHeadDim, kHeadDim);
    std::copy(n.begin(), n.end(), x.begin() + static_cast<std::ptrdiff_t>(h * kHeadDim));
  }
}

void rope(Vec& x, std::size_t heads, std::size_t position, bool neox, double base,
          const float* factors, double magnitude) {
  for (std::size_t i = 0; i < kRot / 2; ++i) {
    double theta = static_cast<double>(position) * std::pow(base, -2.0 * static_cast<double>(i) / kRot);
    if (factors != nullptr) theta /= double{factors[i]};
    const std::size_t a = neox ? i : 2 * i, b = neox ? i + kRot / 2 : 2 * i + 1;
    for (std::size_t h = 0; h < heads; ++h) {
      const double x0 = x[h * kHeadDim + a], x1 = x[h * kHeadDim + b];
      x[h * kHeadDim + a] = magnitude * (x0 * std::cos(theta) - x1 * std::sin(theta));
      x[h * kHeadDim + b] = magnitude * (x0 * std::sin(theta) + x1 * std::cos(theta));
    }
  }
}

double gelu(double v) {
  return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / std::numbers::pi) * (v + 0.044715 * v * v * v)));
}

struct ReferenceOptions {
  std::uint32_t window = kWindow;  // of layer 0
  double attention_cap = kAttentionCap;
};

// The logits after the last of `tokens`.
Vec reference_logits(const ToyWeights& w, const std::vector<std::int32_t>& tokens,
                     ReferenceOptions options = {}) {
  const std::size_t n = tokens.size();
  std::vector<Vec> x(n, Vec(kEmbd));
  for (std::size_t t = 0; t < n; ++t) {
    for (std::size_t i = 0; i < kEmbd; ++i) {
      x[t][i] = kEmbeddingScale * double{w["token_embd.weight"][tokens[t] * kEmbd + i]};
    }
  }
  for (std::uint32_t l = 0; l < kLayers; ++l) {
    std::vector<Vec> q(n), k(n), v(n);
    for (std::size_t t = 0; t < n; ++t) {
      const Vec h = rms_norm(x[t], w[blk(l, "attn_norm.weight")].data(), 0, kEmbd);
      if (l == 0) {
        const auto& qkv = w[blk(l, "attn_qkv.weight")];
        q[t] = matvec(qkv, kQ, kEmbd, h, 0);
        k[t] = matvec(qkv, kKv, kEmbd, h, kQ);
        v[t] = matvec(qkv, kKv, kEmbd, h, kQ + kKv);
      } else {
        q[t] = matvec(w[blk(l, "attn_q.weight")], kQ, kEmbd, h);
        k[t] = matvec(w[blk(l, "attn_k.weight")], kKv, kEmbd, h);
        v[t] = matvec(w[blk(l, "attn_v.weight")], kKv, kEmbd, h);
      }
      if (l == 2) {
        for (std::size_t i = 0; i < kQ; ++i) q[t][i] += double{w[blk(l, "attn_q.bias")][i]};
        for (std::size_t i = 0; i < kKv; ++i) k[t][i] += double{w[blk(l, "attn_k.bias")][i]};
        for (std::size_t i = 0; i < kKv; ++i) v[t][i] += double{w[blk(l, "attn_v.bias")][i]};
      } else {
        norm_heads(q[t], kHeads, w[blk(l, "attn_q_norm.weight")]);
        norm_heads(k[t], kKvHeads, w[blk(l, "attn_k_norm.weight")]);
      }
      if (l == 0) {
        rope(q[t], kHeads, t, true, 10000.0, nullptr, 1.0);
        rope(k[t], kKvHeads, t, true, 10000.0, nullptr, 1.0);
      } else if (l == 1) {
        const float* factors = w["rope_freqs.weight"].data();
        rope(q[t], kHeads, t, false, kLayer1Base, factors, kLayer1AttnFactor);
        rope(k[t], kKvHeads, t, false, kLayer1Base, factors, kLayer1AttnFactor);
      }
    }
    const std::uint32_t window = l == 0 ? options.window : 0;
    for (std::size_t t = 0; t < n; ++t) {
      Vec attn(kQ, 0.0);
      const std::size_t first = window == 0 || t + 1 < window ? 0 : t + 1 - window;
      for (std::size_t h = 0; h < kHeads; ++h) {
        const std::size_t kvh = h / (kHeads / kKvHeads);
        std::vector<double> s;
        double max = -INFINITY;
        for (std::size_t j = first; j <= t; ++j) {
          double dot = 0;
          for (std::size_t d = 0; d < kHeadDim; ++d) dot += q[t][h * kHeadDim + d] * k[j][kvh * kHeadDim + d];
          double score = dot / std::sqrt(double{kHeadDim});
          if (options.attention_cap > 0) score = options.attention_cap * std::tanh(score / options.attention_cap);
          s.push_back(score);
          max = std::max(max, score);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - max));
        for (std::size_t j = first; j <= t; ++j) {
          for (std::size_t d = 0; d < kHeadDim; ++d) {
            attn[h * kHeadDim + d] += s[j - first] / sum * v[j][kvh * kHeadDim + d];
          }
        }
      }
      Vec o = matvec(w[blk(l, "attn_output.weight")], kEmbd, kQ, attn);
      if (l < 2) o = rms_norm(o, w[blk(l, "post_attention_norm.weight")].data(), 0, kEmbd);
      for (std::size_t i = 0; i < kEmbd; ++i) x[t][i] += kResidualScale * o[i];
    }
    for (std::size_t t = 0; t < n; ++t) {
      const Vec h = rms_norm(x[t], w[blk(l, "ffn_norm.weight")].data(), 0, kEmbd);
      Vec gate, up;
      if (l == 0) {
        gate = matvec(w[blk(l, "ffn_gate_up.weight")], kFf, kEmbd, h, 0);
        up = matvec(w[blk(l, "ffn_gate_up.weight")], kFf, kEmbd, h, kFf);
      } else {
        gate = matvec(w[blk(l, "ffn_gate.weight")], kFf, kEmbd, h);
        up = matvec(w[blk(l, "ffn_up.weight")], kFf, kEmbd, h);
      }
      Vec f(kFf);
      for (std::size_t i = 0; i < kFf; ++i) f[i] = gelu(gate[i]) * up[i];
      Vec o = matvec(w[blk(l, "ffn_down.weight")], kEmbd, kFf, f);
      if (l < 2) o = rms_norm(o, w[blk(l, "post_ffw_norm.weight")].data(), 0, kEmbd);
      for (std::size_t i = 0; i < kEmbd; ++i) x[t][i] += kResidualScale * o[i];
    }
  }
  const Vec h = rms_norm(x[n - 1], w["output_norm.weight"].data(), 0, kEmbd);
  Vec logits = matvec(w["output.weight"], kVocab, kEmbd, h);
  for (double& z : logits) z = kFinalCap * std::tanh(kLogitScale * z / kFinalCap);
  return logits;
}

double max_difference(const std::vector<float>& a, const Vec& b) {
  double worst = 0;
  for (std::size_t i = 0; i < b.size(); ++i) worst = std::max(worst, std::abs(double{a[i]} - b[i]));
  return worst;
}

class ToyArchitecture : public ::testing::Test {
 protected:
  // Registered by the first test (a failure in SetUpTestSuite would only skip the tests).
  static void TearDownTestSuite() { core::unregister_architecture("toy"); }

  void SetUp() override {
    if (core::find_architecture("toy") == nullptr) {
      auto registered = core::register_architecture(kToy);
      ASSERT_TRUE(registered) << registered.error();
    }
    path_ = (dir_ / "toy.gguf").string();
    write_toy(path_, weights_);
  }

  TempDir dir_;
  std::string path_;
  ToyWeights weights_ = make_weights();
  TestHost host_;
  const std::vector<std::int32_t> tokens_ = {1, 7, 19, 3, 44, 12, 30, 9, 25, 16, 5};
};

TEST_F(ToyArchitecture, ItsDescriptionNeedsEveryFeatureOfAbi20) {
  auto file = core::ModelFile::open(path_, host_.registry());
  ASSERT_TRUE(file) << file.error();
  auto h = core::validate_model(**file);
  ASSERT_TRUE(h) << h.error();
  auto model = kToy.describe(**file, *h, core::RunShape{64});
  ASSERT_TRUE(model) << model.error();
  EXPECT_EQ(model->features(), LPX_MODEL_FEATURES_2_0)
      << "missing: " << lpx::model_feature_names(LPX_MODEL_FEATURES_2_0 & ~model->features());
}

// Prefill (all rows in one step) and decode (a row per step), on both CPU backends and both
// activation modes: within the f16 rounding of q, the KV cache and the softmax weights of the
// double-precision reading; cpu and cpu-scalar bit for bit.
TEST_F(ToyArchitecture, RunsOnTheCpuBackendsAsTheDescriptionReads) {
  const Vec expected = reference_logits(weights_, tokens_);
  // The comparison can tell: without the window, or without the soft cap, the reading differs.
  const Vec no_window = reference_logits(weights_, tokens_, {.window = 0});
  const Vec no_cap = reference_logits(weights_, tokens_, {.attention_cap = 0});
  constexpr double kTolerance = 0.005;  // measured: 8.4e-4
  for (const Vec* other : {&no_window, &no_cap}) {
    double differ = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) differ = std::max(differ, std::abs(expected[i] - (*other)[i]));
    EXPECT_GT(differ, 5 * kTolerance) << "the toy model does not exercise this feature";
  }
  for (const char* activations : {"f32", "q8"}) {
    std::vector<float> per_backend[2];
    int b = 0;
    for (const char* backend : {"cpu-scalar", "cpu"}) {
      ForwardRig rig(host_, path_, backend, {{"activations", std::string(activations)}}, 64);
      const std::vector<float> prefill = rig.feed(tokens_);
      EXPECT_LT(max_difference(prefill, expected), kTolerance) << backend << " " << activations;
      rig.reset();
      std::vector<float> decode;
      for (std::int32_t token : tokens_) decode = rig.feed({token});
      EXPECT_LT(max_difference(decode, expected), kTolerance) << backend << " " << activations;
      per_backend[b++] = decode;
    }
    EXPECT_EQ(per_backend[0], per_backend[1]) << "cpu and cpu-scalar differ with " << activations;
  }
}

TEST_F(ToyArchitecture, GeneratesThroughTheWholeEngine) {
  auto engine = host_.engine(path_, "cpu");
  ASSERT_NE(engine, nullptr);
  lpx_request request{};
  request.prompt_tokens = tokens_.data();
  request.prompt_token_count = tokens_.size();
  request.max_tokens = 12;
  request.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
  const Generation g = generate(*engine, request);
  EXPECT_EQ(g.error, "");
  EXPECT_EQ(g.tokens.size(), 12u);
}

// With the window on every layer, a running sequence gives back the KV blocks behind its
// window: a second request that does not fit beside the first is admitted (and finishes) while
// the first still runs, taking those blocks, and both answer exactly as a forward pass that
// keeps every block. A block given back too early would be overwritten and change the first's
// tokens.
TEST_F(ToyArchitecture, AWindowOnEveryLayerLetsTheCacheGiveBlocksBack) {
  const std::string path = (dir_ / "windowed.gguf").string();
  write_toy(path, weights_, true, /*window_every_layer=*/true);
  {
    auto file = core::ModelFile::open(path, host_.registry());
    ASSERT_TRUE(file) << file.error();
    auto h = core::validate_model(**file);
    ASSERT_TRUE(h) << h.error();
    auto model = kToy.describe(**file, *h, core::RunShape{64});
    ASSERT_TRUE(model) << model.error();
    EXPECT_EQ(model->kv_window(), kWindow);
  }
  core::EngineConfig config;
  config.context_size = 64;
  config.kv_cache_tokens = 64;  // 16 blocks: the first request reserves 13, the second 6
  config.block_size = 4;
  config.max_sequences = 2;
  auto engine = host_.engine(path, "cpu", {"greedy"}, config);
  ASSERT_NE(engine, nullptr);

  struct Run {
    std::vector<std::int32_t> prompt, tokens;
    std::uint32_t max_tokens = 0;
    std::uint32_t blocks_at_first = 0, blocks_at_last = 0;
    core::Engine* engine = nullptr;
    std::atomic<int>* finished = nullptr;
    int finished_as = -1;
  };
  std::atomic<int> finished{0};
  Run first{tokens_, {}, 40};
  Run second{{1, 4, 9, 16, 25, 36, 2, 8, 18, 32, 6}, {}, 10};
  // Submitted together: the first is admitted, the second waits for blocks (alone, a fast
  // first request could end before the second is even submitted).
  std::vector<lpx_request> requests;
  for (Run* run : {&first, &second}) {
    run->engine = engine.get();
    run->finished = &finished;
    lpx_request request{};
    request.struct_size = sizeof request;
    request.prompt_tokens = run->prompt.data();
    request.prompt_token_count = run->prompt.size();
    request.max_tokens = run->max_tokens;
    request.flags = LPX_REQUEST_IGNORE_END_OF_GENERATION;
    request.user = run;
    request.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
      auto& r = *static_cast<Run*>(user);
      lpx_engine_stats stats{};
      r.engine->stats(stats);
      if (r.tokens.empty()) r.blocks_at_first = stats.kv_blocks_used;
      r.blocks_at_last = stats.kv_blocks_used;
      if (e->token >= 0) r.tokens.push_back(e->token);
      return 0;
    };
    request.on_done = [](void* user, const lpx_request_result*) {
      auto& r = *static_cast<Run*>(user);
      r.finished_as = r.finished->fetch_add(1);
    };
    requests.push_back(request);
  }
  auto ids = engine->submit_together(requests);
  ASSERT_TRUE(ids.has_value()) << ids.error().message;
  for (std::uint64_t id : *ids) engine->wait(id);

  EXPECT_EQ(second.finished_as, 0) << "the second request waited for the first to end";
  EXPECT_EQ(first.finished_as, 1);
  // After the prompt the first holds 11 blocks (positions 0-7 left every window), at its last
  // token 2 (44-51), the second none any more.
  EXPECT_EQ(first.blocks_at_first, 11u);
  EXPECT_EQ(first.blocks_at_last, 2u);
  for (Run* run : {&first, &second}) {
    ForwardRig rig(host_, path, "cpu", {}, 64);
    std::vector<std::int32_t> expected;
    std::vector<float> logits = rig.feed(run->prompt);
    while (expected.size() < run->max_tokens) {
      expected.push_back(static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) -
                                                   logits.begin()));
      logits = rig.feed({expected.back()});
    }
    EXPECT_EQ(run->tokens, expected);
  }
  lpx_engine_stats stats{};
  engine->stats(stats);
  EXPECT_EQ(stats.kv_blocks_used, 0u);
}

TEST_F(ToyArchitecture, ABackendWithoutTheFeaturesIsRefusedBeforeLoading) {
  core::EngineInputs inputs;
  auto file = core::ModelFile::open(path_, host_.registry());
  ASSERT_TRUE(file) << file.error();
  inputs.file = std::move(*file);
  auto backend = core::default_instance(host_.registry(), "test-device");
  ASSERT_TRUE(backend) << backend.error();
  inputs.backend = backend->instance;
  auto greedy = core::default_instance(host_.registry(), "greedy");
  ASSERT_TRUE(greedy) << greedy.error();
  inputs.sampler_chain.push_back(std::move(*greedy));
  auto engine = core::build_engine(std::move(inputs), host_.registry());
  ASSERT_FALSE(engine);
  const std::string& error = engine.error().message;
  EXPECT_NE(error.find("backend 'test-device' cannot run this toy model: it lacks q/k norms"),
            std::string::npos)
      << error;
  for (const char* feature : {"sliding-window attention", "GeGLU feed-forward",
                              "a fused q/k/v projection", "final logit soft-capping"}) {
    EXPECT_NE(error.find(feature), std::string::npos) << feature << ": " << error;
  }
  EXPECT_NE(error.find("it runs q/k/v biases, rope frequency factors"), std::string::npos) << error;
  // model_load would have said "handed a model needing features it lacks".
  EXPECT_EQ(error.find("handed"), std::string::npos) << error;
}

TEST_F(ToyArchitecture, AMissingArchitectureKeyIsNamed) {
  const std::string path = (dir_ / "no-window.gguf").string();
  write_toy(path, weights_, /*with_window_key=*/false);
  auto file = core::ModelFile::open(path, host_.registry());
  ASSERT_TRUE(file) << file.error();
  auto h = core::validate_model(**file);
  ASSERT_TRUE(h) << h.error();
  auto model = kToy.describe(**file, *h, core::RunShape{64});
  ASSERT_FALSE(model);
  EXPECT_NE(model.error().message.find("toy.attention.sliding_window"), std::string::npos) << model.error().message;
}

TEST(Architectures, ANameIsRegisteredOnce) {
  static const core::Architecture kImpostor{"llama", &toy_tensors, &toy_describe};
  auto registered = core::register_architecture(kImpostor);
  ASSERT_FALSE(registered);
  EXPECT_NE(registered.error().message.find("'llama' is already known"), std::string::npos);
  EXPECT_EQ(core::find_architecture("toy"), nullptr) << "only the toy suite registers it";
}

}  // namespace
}  // namespace lpx::test
