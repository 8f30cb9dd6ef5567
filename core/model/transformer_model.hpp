// A model as the architecture-neutral description of lpx/kinds/transformer.h: what its
// architecture (architecture.hpp) makes of a validated model file, and all a backend sees.
// It owns the layer array and what the description points to beyond the file (rope factors
// computed from metadata); tensor views point into the file's mapping, so the ModelFile must
// outlive it. Move-only: moving keeps every pointer valid (the storage moves with it).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "lpx/kinds/transformer.h"
#include "util/expected.hpp"

namespace lpx::core {

class TransformerModel {
 public:
  TransformerModel();
  TransformerModel(TransformerModel&&) noexcept = default;
  TransformerModel& operator=(TransformerModel&&) noexcept = default;
  TransformerModel(const TransformerModel&) = delete;
  TransformerModel& operator=(const TransformerModel&) = delete;

  // The architecture fills these, then calls finish().
  lpx_transformer_desc& desc() noexcept { return desc_; }
  std::vector<lpx_transformer_layer>& layers() noexcept { return layers_; }
  // Keep `values` / `rope` alive as long as the model and return where they are.
  const float* keep(std::vector<float> values);
  const lpx_rope_params* keep(const lpx_rope_params& rope);
  // Points the description at the layers, sets the struct sizes and stride, computes the
  // feature bits, and checks that the description is whole and consistent (one of wq/wk/wv and
  // wqkv per layer, and so on); errors name the layer and the field.
  Expected<bool> finish();

  const lpx_transformer_desc& desc() const noexcept { return desc_; }

  // Where the model multiplies its (roped) queries by attention_scale before attention rather
  // than its scores after q.k (Gemma, Phi-3 as llama.cpp builds them): the same math, but q is
  // rounded to f16 after the scale, so a host reproducing llama.cpp's rounding must follow it.
  // Not part of the description: a backend given the whole model may scale either way.
  bool scales_queries() const noexcept { return scales_queries_; }
  void set_scales_queries(bool value) noexcept { scales_queries_ = value; }
  const lpx_transformer_layer& layer(std::uint32_t i) const noexcept { return layers_[i]; }
  // How far back any row attends: the largest window when every layer has one (a cache may
  // drop what lies further back), 0 when some layer attends to every position.
  std::uint32_t kv_window() const noexcept;
  std::uint64_t features() const noexcept { return desc_.features; }

 private:
  lpx_transformer_desc desc_{};
  std::vector<lpx_transformer_layer> layers_;
  std::deque<std::vector<float>> kept_;
  std::deque<lpx_rope_params> ropes_;
  bool scales_queries_ = false;
};

// A new layer with its struct size set and no rope.
lpx_transformer_layer new_layer();
// Rope params with their struct size set, freq_scale and attn_factor 1, the rest 0.
lpx_rope_params new_rope();

// A scale of the description: 0 reads as 1 (lpx/kinds/transformer.h).
inline float scale_or_one(float scale) noexcept { return scale == 0.0f ? 1.0f : scale; }

// The feature bits `desc` needs, from its contents (lpx_model_feature).
std::uint64_t required_features(const lpx_transformer_desc& desc);

}  // namespace lpx::core
