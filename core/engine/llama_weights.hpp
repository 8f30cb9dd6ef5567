// The tensors of a llama-family model (llama, qwen2), looked up once by name so the forward pass
// touches no strings. Views point into the model file's mapping: the ModelFile must outlive this.
#pragma once

#include <cstdint>
#include <vector>

#include "lpx/kinds/tensor.h"
#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct LlamaLayerWeights {
  const lpx_tensor_view* attn_norm;
  const lpx_tensor_view* wq;
  const lpx_tensor_view* wk;
  const lpx_tensor_view* wv;
  const lpx_tensor_view* wo;
  const float* bq;  // Q/K/V biases (qwen2); nullptr when the model has none
  const float* bk;
  const float* bv;
  const lpx_tensor_view* ffn_norm;
  const lpx_tensor_view* ffn_gate;
  const lpx_tensor_view* ffn_up;
  const lpx_tensor_view* ffn_down;
};

struct LlamaWeights {
  const lpx_tensor_view* token_embd;
  const lpx_tensor_view* output_norm;
  const lpx_tensor_view* output;  // token_embd when the head is tied
  std::vector<LlamaLayerWeights> layers;
  // n_rot/2 rope frequency divisors (Llama 3 scaling), empty when the model has none.
  std::vector<float> rope_freq_factors;

  // Resolves every tensor; the model has been validated (model_validation), so shapes are right;
  // checked here: norms and biases are f32 (the kernels read them as floats).
  static Expected<LlamaWeights> resolve(const ModelFile& file, const Hyperparameters& h);
};

}  // namespace lpx::core
