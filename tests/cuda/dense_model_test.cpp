// What the cuda backend makes of a transformer description before it allocates anything
// (kernels/cuda/backend/dense_model.cpp): every 2.0 feature accepted and unpacked per layer,
// fused projections split into views of their row ranges, scales read 0 as 1, and malformed or
// unknown input refused with its reason. Plain C++: runs on every machine, GPU or not.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <lpx/cpp/status.hpp>

#include "cuda/backend/dense_model.hpp"

namespace lpx::cuda_backend {
namespace {

constexpr std::uint32_t kEmbd = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kFf = 96;
constexpr std::size_t kQ8RowBytes = kEmbd / 32 * 34;  // a Q8_0 row of 64 columns

lpx_tensor_view matrix(const char* name, const std::vector<std::uint8_t>& bytes, std::int64_t rows) {
  lpx_tensor_view v{};
  v.name = name;
  v.type = LPX_TENSOR_Q8_0;
  v.n_dims = 2;
  v.dims[0] = kEmbd;
  v.dims[1] = rows;
  v.data = bytes.data();
  v.size_bytes = bytes.size();
  return v;
}

lpx_tensor_view vector_view(const char* name, const std::vector<float>& values) {
  lpx_tensor_view v{};
  v.name = name;
  v.type = LPX_TENSOR_F32;
  v.n_dims = 1;
  v.dims[0] = static_cast<std::int64_t>(values.size());
  v.data = values.data();
  v.size_bytes = values.size() * sizeof(float);
  return v;
}

// A Phi-3-like layer (fused q/k/v and gate/up) and a Gemma-like one (split, norms, window,
// a rope of its own), then a NoPE layer; scales and soft caps set.
class Description : public ::testing::Test {
 protected:
  Description()
      : qkv_bytes_((kHeads + 2 * kKvHeads) * kHeadDim * kQ8RowBytes, 1),
        gate_up_bytes_(2 * kFf * kQ8RowBytes, 2),
        q_bytes_(kHeads * kHeadDim * kQ8RowBytes, 3),
        kv_bytes_(kKvHeads * kHeadDim * kQ8RowBytes, 4),
        ff_bytes_(kFf * kQ8RowBytes, 5),
        embd_(kEmbd, 1.0f),
        head_(kHeadDim, 1.0f),
        factors_(kHeadDim / 2, 2.0f) {
    qkv_ = matrix("blk.0.attn_qkv.weight", qkv_bytes_, (kHeads + 2 * kKvHeads) * kHeadDim);
    gate_up_ = matrix("blk.0.ffn_up.weight", gate_up_bytes_, 2 * kFf);
    wq_ = matrix("blk.1.attn_q.weight", q_bytes_, kHeads * kHeadDim);
    wkv_ = matrix("blk.1.attn_k.weight", kv_bytes_, kKvHeads * kHeadDim);
    ff_ = matrix("blk.1.ffn_gate.weight", ff_bytes_, kFf);
    norm_ = vector_view("norm", embd_);
    head_norm_ = vector_view("head_norm", head_);
    short_norm_ = vector_view("short", std::vector<float>(kHeadDim - 1, 1.0f));  // dangling: size only
    short_norm_.data = head_.data();

    long_rope_ = lpx_rope_params{sizeof(lpx_rope_params), LPX_ROPE_NEOX, kHeadDim, 10000.0f, 1.0f,
                                 factors_.data(), 1.19f};
    local_rope_ = lpx_rope_params{sizeof(lpx_rope_params), LPX_ROPE_NEOX, kHeadDim, 10000.0f, 1.0f,
                                  nullptr, 0.0f};
    layers_.resize(3);
    for (lpx_transformer_layer& l : layers_) {
      l.struct_size = sizeof(lpx_transformer_layer);
      l.attn_norm = &norm_;
      l.ffn_norm = &norm_;
      l.wo = &wq_;
      l.ffn_down = &ff_;
    }
    layers_[0].wqkv = &qkv_;
    layers_[0].ffn_gate_up = &gate_up_;
    layers_[0].rope = &long_rope_;
    for (std::size_t i = 1; i < 3; ++i) {
      lpx_transformer_layer& l = layers_[i];
      l.wq = &wq_;
      l.wk = &wkv_;
      l.wv = &wkv_;
      l.q_norm = l.k_norm = &head_norm_;
      l.post_attention_norm = l.post_ffn_norm = &norm_;
      l.ffn_gate = l.ffn_up = &ff_;
    }
    layers_[1].window = 512;
    layers_[1].rope = &local_rope_;
    layers_[2].rope = nullptr;  // NoPE

    d_.struct_size = sizeof d_;
    d_.features = LPX_MODEL_FEATURES_2_0;
    d_.architecture = "test";
    d_.n_layer = 3;
    d_.n_embd = kEmbd;
    d_.n_head = kHeads;
    d_.n_head_kv = kKvHeads;
    d_.head_dim = kHeadDim;
    d_.n_ff = kFf;
    d_.n_vocab = kFf;
    d_.activation = LPX_ACTIVATION_GELU_TANH;
    d_.norm_eps = 1e-6f;
    d_.attention_scale = 0.25f;
    d_.attention_softcap = 50.0f;
    d_.embedding_scale = 8.0f;
    d_.residual_scale = 0.0f;  // reads as 1
    d_.logit_scale = 0.125f;
    d_.final_softcap = 30.0f;
    d_.token_embd = d_.output = &ff_;
    d_.output_norm = &norm_;
    d_.layers = layers_.data();
    d_.layer_stride = sizeof(lpx_transformer_layer);
    d_.kv_block_size = 16;
    d_.kv_blocks = 8;
    d_.max_rows = 8;
    d_.max_sequences = 2;
    d_.max_context = 128;
  }

  std::vector<std::uint8_t> qkv_bytes_, gate_up_bytes_, q_bytes_, kv_bytes_, ff_bytes_;
  std::vector<float> embd_, head_, factors_;
  lpx_tensor_view qkv_{}, gate_up_{}, wq_{}, wkv_{}, ff_{}, norm_{}, head_norm_{}, short_norm_{};
  lpx_rope_params long_rope_{}, local_rope_{};
  std::vector<lpx_transformer_layer> layers_;
  lpx_transformer_desc d_{};
};

TEST_F(Description, FusedProjectionsBecomeViewsOfTheirRowRanges) {
  const DenseModel m = dense_model(d_);
  ASSERT_EQ(m.layers.size(), 3u);
  const DenseLayer& l = m.layers[0];
  const auto* base = static_cast<const std::uint8_t*>(qkv_.data);
  const std::int64_t q_rows = kHeads * kHeadDim, kv_rows = kKvHeads * kHeadDim;
  EXPECT_EQ(l.wq->data, base);
  EXPECT_EQ(l.wq->dims[1], q_rows);
  EXPECT_EQ(l.wk->data, base + q_rows * kQ8RowBytes);
  EXPECT_EQ(l.wk->dims[1], kv_rows);
  EXPECT_EQ(l.wv->data, base + (q_rows + kv_rows) * kQ8RowBytes);
  EXPECT_EQ(l.wv->size_bytes, kv_rows * kQ8RowBytes);
  EXPECT_EQ(l.wq->dims[0], kEmbd);
  EXPECT_EQ(l.wq->type, LPX_TENSOR_Q8_0);
  const auto* gate_up = static_cast<const std::uint8_t*>(gate_up_.data);
  EXPECT_EQ(l.ffn_gate->data, gate_up);
  EXPECT_EQ(l.ffn_up->data, gate_up + kFf * kQ8RowBytes);
  EXPECT_EQ(l.ffn_up->dims[1], kFf);
  EXPECT_EQ(l.ffn_up->size_bytes, kFf * kQ8RowBytes);
  // The split views live in the model: still valid after it is copied and the copy moved.
  const DenseModel copy = m;
  const DenseModel moved = DenseModel(copy);
  EXPECT_EQ(moved.layers[0].wk->dims[1], kv_rows);
}

TEST_F(Description, EveryLayerKeepsItsOwnWindowRopeAndNorms) {
  const DenseModel m = dense_model(d_);
  EXPECT_EQ(m.layers[0].window, 0u);
  EXPECT_EQ(m.layers[0].rope.freq_factors, factors_.data());
  EXPECT_EQ(m.layers[0].rope.attn_factor, 1.19f);
  EXPECT_EQ(m.layers[0].q_norm, nullptr);
  EXPECT_EQ(m.layers[0].post_attention_norm, nullptr);
  EXPECT_EQ(m.layers[1].window, 512u);
  EXPECT_EQ(m.layers[1].rope.n_rot, kHeadDim);
  EXPECT_EQ(m.layers[1].rope.freq_factors, nullptr);
  EXPECT_EQ(m.layers[1].q_norm, head_.data());
  EXPECT_EQ(m.layers[1].k_norm, head_.data());
  EXPECT_EQ(m.layers[1].post_ffn_norm, embd_.data());
  EXPECT_EQ(m.layers[2].rope.n_rot, 0u);  // NoPE
  EXPECT_TRUE(m.gelu);
  EXPECT_EQ(m.attention_softcap, 50.0f);
  EXPECT_EQ(m.embedding_scale, 8.0f);
  EXPECT_EQ(m.residual_scale, 1.0f);
  EXPECT_EQ(m.logit_scale, 0.125f);
  EXPECT_EQ(m.final_softcap, 30.0f);
}

// The message of the lpx::Error that dense_model throws for d, and its code.
std::pair<int, std::string> refusal(const lpx_transformer_desc& d) {
  try {
    (void)dense_model(d);
  } catch (const lpx::Error& e) {
    return {e.code(), e.what()};
  }
  return {LPX_OK, "accepted"};
}

TEST_F(Description, RefusesWhatItCannotRunSayingWhy) {
  d_.features |= std::uint64_t{1} << 40;  // a feature of a later minor version
  auto [code, message] = refusal(d_);
  EXPECT_EQ(code, LPX_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("it lacks feature bit 1099511627776"), std::string::npos) << message;
  d_.features = LPX_MODEL_FEATURES_2_0;

  for (const std::int64_t extra : {-1, 1}) {  // fewer or more rows than q, k and v have
    qkv_.dims[1] += extra;
    std::tie(code, message) = refusal(d_);
    EXPECT_EQ(code, LPX_ERR_INVALID_ARGUMENT);
    EXPECT_NE(message.find("layer 0 has a fused matrix 'blk.0.attn_qkv.weight' of the wrong shape"),
              std::string::npos) << message;
    qkv_.dims[1] -= extra;
  }
  gate_up_.dims[0] = 2 * kEmbd;  // columns other than n_embd
  std::tie(code, message) = refusal(d_);
  EXPECT_NE(message.find("layer 0 has a fused matrix 'blk.0.ffn_up.weight' of the wrong shape"),
            std::string::npos) << message;
  gate_up_.dims[0] = kEmbd;

  layers_[2].q_norm = &short_norm_;  // head_dim - 1 values
  std::tie(code, message) = refusal(d_);
  EXPECT_EQ(code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message.find("layer 2 has a q norm that is not 16 f32 values"), std::string::npos)
      << message;
  layers_[2].q_norm = &head_norm_;

  local_rope_.n_rot = 3;
  std::tie(code, message) = refusal(d_);
  EXPECT_EQ(code, LPX_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("layer 1 ropes 3 of 16 dims"), std::string::npos) << message;
  local_rope_.n_rot = kHeadDim;

  d_.activation = 7;
  std::tie(code, message) = refusal(d_);
  EXPECT_EQ(code, LPX_ERR_UNSUPPORTED);
  EXPECT_NE(message.find("activation 7"), std::string::npos) << message;
  d_.activation = LPX_ACTIVATION_SILU;
  EXPECT_EQ(refusal(d_).first, LPX_OK);
}

}  // namespace
}  // namespace lpx::cuda_backend
