// The model as the cuda backend runs it: every feature of the transformer description
// (lpx/kinds/transformer.h) that its kernels implement, checked and unpacked once at load,
// before anything is allocated. Fused projections (Phi-3's q/k/v and gate/up) are split here
// into views of their row ranges, so the rest of the backend sees split matrices only (and
// stacks them again as it stacks split files' matrices). Tensor views point into the caller's
// description or into the DenseModel itself: valid during model_load only.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <lpx/kinds/quant_backend.h>

namespace lpx::cuda_backend {

// The lpx_model_feature bits the cuda kernels run (QuantBackend::model_features): all of 2.0.
inline constexpr std::uint64_t kCudaFeatures =
    LPX_FEATURE_QKV_BIAS | LPX_FEATURE_QK_NORM | LPX_FEATURE_POST_NORMS |
    LPX_FEATURE_SLIDING_WINDOW | LPX_FEATURE_NOPE_LAYERS | LPX_FEATURE_LAYER_ROPE |
    LPX_FEATURE_ROPE_FACTORS | LPX_FEATURE_ROPE_ATTN_FACTOR | LPX_FEATURE_GELU |
    LPX_FEATURE_FUSED_QKV | LPX_FEATURE_FUSED_GATE_UP | LPX_FEATURE_SCALES |
    LPX_FEATURE_ATTENTION_SOFTCAP | LPX_FEATURE_FINAL_SOFTCAP;

struct DenseLayer {
  const lpx_tensor_view* attn_norm;
  const lpx_tensor_view* wq;
  const lpx_tensor_view* wk;
  const lpx_tensor_view* wv;
  const lpx_tensor_view* wo;
  const float* bq;  // null when the model has no biases
  const float* bk;
  const float* bv;
  const float* q_norm;  // head_dim f32 weights, or null; likewise k_norm
  const float* k_norm;
  const float* post_attention_norm;  // n_embd f32 weights, or null; likewise post_ffn_norm
  const lpx_tensor_view* ffn_norm;
  const lpx_tensor_view* ffn_gate;
  const lpx_tensor_view* ffn_up;
  const lpx_tensor_view* ffn_down;
  const float* post_ffn_norm;
  std::uint32_t window;   // attended positions, the row's own included; 0: all
  lpx_rope_params rope;   // n_rot 0: no rope (a NoPE layer); freq_factors: host, n_rot / 2
};

struct DenseModel {
  std::uint32_t n_layer, n_embd, n_head, n_head_kv, head_dim, n_ff, n_vocab;
  float rms_norm_eps;
  float attention_scale;
  bool gelu;                // GeGLU (tanh GELU) instead of SwiGLU
  float attention_softcap;  // 0: none
  float embedding_scale;    // 1: none (the description's 0 reads as 1)
  float residual_scale;
  float logit_scale;
  float final_softcap;      // 0: none
  const lpx_tensor_view* token_embd;
  const lpx_tensor_view* output_norm;
  const lpx_tensor_view* output;
  std::vector<DenseLayer> layers;
  std::uint32_t kv_block_size, kv_blocks, max_rows, max_sequences, max_context;
  // Row ranges of fused matrices, which the layers point to (each owned apart, so the
  // pointers survive moves).
  std::vector<std::shared_ptr<const lpx_tensor_view>> split_views;
};

// Throws lpx::Error: LPX_ERR_UNSUPPORTED naming every feature or shape these kernels cannot
// run, LPX_ERR_INVALID_ARGUMENT for a malformed description.
DenseModel dense_model(const lpx_transformer_desc& desc);

}  // namespace lpx::cuda_backend
