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
  // Keeps `values` alive as long as the model and returns where they are.
  const float* keep(std::vector<float> values);
  // Points the description at the layers, sets the struct sizes and stride, computes the
  // feature bits, and checks that the description is whole and consistent (one of wq/wk/wv and
  // wqkv per layer, and so on); errors name the layer and the field.
  Expected<bool> finish();

  const lpx_transformer_desc& desc() const noexcept { return desc_; }
  const lpx_transformer_layer& layer(std::uint32_t i) const noexcept { return layers_[i]; }
  std::uint64_t features() const noexcept { return desc_.features; }

 private:
  lpx_transformer_desc desc_{};
  std::vector<lpx_transformer_layer> layers_;
  std::deque<std::vector<float>> kept_;
};

// A new layer with its struct size set, rope attn_factor 1 and freq_scale 1.
lpx_transformer_layer new_layer();

// The feature bits `desc` needs, from its contents (lpx_model_feature).
std::uint64_t required_features(const lpx_transformer_desc& desc);

// "q/k norms, sliding-window attention" for a set of feature bits.
std::string feature_names(std::uint64_t bits);

}  // namespace lpx::core
