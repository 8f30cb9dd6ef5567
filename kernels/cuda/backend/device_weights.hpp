// A model's weights copied into one device allocation: quantized matrices keep
// their GGUF block layout (the GEMV kernels read them as they are), norm weights and biases
// are f32. A tied output head shares the embedding's bytes, and layers sharing rope factors
// share one copy. Matrices that read the same input
// (a layer's q, k, v; its gate and up) are stacked when they share type and shape, so each set
// is one matrix: one GEMV launch instead of three or two. q, k and v are placed one after the
// other; gate and up are interleaved row by row, so that one GEMV row group computes a gate row
// and its up row and can store SwiGLU of the two (GemvStore::kSwigluPairs).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include <lpx/kinds/quant_backend.h>

#include "cuda/launch.hpp"
#include "dense_model.hpp"
#include "device_memory.hpp"

namespace lpx::cuda_backend {

using kernels::cuda::DeviceWeight;

struct DeviceLayer {
  const float* attn_norm = nullptr;
  DeviceWeight wq, wk, wv, wo;
  const float* bq = nullptr;  // null when the model has no bias
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // head_dim weights, or null; likewise k_norm
  const float* k_norm = nullptr;
  const float* post_attention_norm = nullptr;  // n_embd weights, or null; likewise post_ffn_norm
  const float* post_ffn_norm = nullptr;
  const float* rope_freq_factors = nullptr;  // n_rot / 2, or null
  const float* ffn_norm = nullptr;
  DeviceWeight ffn_gate, ffn_up, ffn_down;  // gate and up: rows == 0 when interleaved
  // wq over wk over wv as one matrix; ffn_gate and ffn_up interleaved (row 2j gate row j, row
  // 2j + 1 up row j). rows == 0 where the parts could not be stacked (different types or
  // shapes); then the parts are matrices of their own.
  DeviceWeight wqkv, ffn_gate_up;
};

class DeviceWeights {
 public:
  // Copies every tensor `desc` names; throws lpx::Error (out of memory: how much was needed).
  explicit DeviceWeights(const DenseModel& desc);

  DeviceWeight token_embd;
  DeviceWeight output;
  const float* output_norm = nullptr;
  std::vector<DeviceLayer> layers;

  std::size_t bytes() const noexcept { return storage_.bytes(); }
  // The widest input of any matrix (for activation scratch) and the most rows of any matrix.
  std::int64_t max_columns() const noexcept { return max_columns_; }
  std::int64_t max_rows() const noexcept { return max_rows_; }

 private:
  DeviceArray<std::uint8_t> storage_;
  std::int64_t max_columns_ = 0;
  std::int64_t max_rows_ = 0;
};

}  // namespace lpx::cuda_backend
