// The model as the cuda backend runs it: the part of the transformer description
// (lpx/kinds/transformer.h) its kernels implement — every layer alike, pre-norm attention with
// rope on every layer, SwiGLU, optional q/k/v biases and rope frequency factors — checked and
// unpacked once at load, before anything is allocated. Tensor views point into the caller's
// description: valid during model_load only.
#pragma once

#include <cstdint>
#include <vector>

#include <lpx/kinds/quant_backend.h>

namespace lpx::cuda_backend {

// The lpx_model_feature bits the cuda kernels run (QuantBackend::model_features).
inline constexpr std::uint64_t kCudaFeatures = LPX_FEATURE_QKV_BIAS | LPX_FEATURE_ROPE_FACTORS;

struct DenseLayer {
  const lpx_tensor_view* attn_norm;
  const lpx_tensor_view* wq;
  const lpx_tensor_view* wk;
  const lpx_tensor_view* wv;
  const lpx_tensor_view* wo;
  const float* bq;  // null when the model has no biases
  const float* bk;
  const float* bv;
  const lpx_tensor_view* ffn_norm;
  const lpx_tensor_view* ffn_gate;
  const lpx_tensor_view* ffn_up;
  const lpx_tensor_view* ffn_down;
};

struct DenseModel {
  std::uint32_t n_layer, n_embd, n_head, n_head_kv, head_dim, n_ff, n_vocab;
  float rms_norm_eps;
  float attention_scale;
  lpx_rope_params rope;  // every layer's
  const lpx_tensor_view* token_embd;
  const lpx_tensor_view* output_norm;
  const lpx_tensor_view* output;
  std::vector<DenseLayer> layers;
  std::uint32_t kv_block_size, kv_blocks, max_rows, max_sequences, max_context;
};

// Throws lpx::Error: LPX_ERR_UNSUPPORTED naming every feature or shape these kernels cannot
// run, LPX_ERR_INVALID_ARGUMENT for a malformed description.
DenseModel dense_model(const lpx_transformer_desc& desc);

}  // namespace lpx::cuda_backend
