// A LoRA adapter kept beside the model's unchanged weights and applied to the requests that
// name it (lpx_request.adapter; an API's `model` field "MODEL:ADAPTER", as vLLM's multi-LoRA
// serving reads it). Several stay resident at once, and one batch may mix them: the forward pass
// adds s * B (A x) to the product of each adapted weight for the rows of the requests that use
// the adapter (engine/transformer_forward.cpp). Unlike a merge, it works beside quantized
// weights, and the base model answers unchanged the requests that name no adapter.
//
// A and B are kept in f32 whatever the file stores: they are small (a rank-16 adapter of every
// projection of SmolLM2-135M: 20 MB), and the CPU kernels multiply f32 rows of a few elements
// (B's rows are r long) much faster than f16 ones (decode 121 against 94 tokens/s, pp128 319
// against 211, docs/perf/lora.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/lora_adapter.hpp"

namespace lpx::core {

// `[model] adapters` / `--adapter`: "NAME=FILE" or "NAME=FILE@SCALE".
struct AdapterSpec {
  std::string name;
  LoraSpec lora;
};
Expected<AdapterSpec> parse_adapter_spec(const std::string& text);

class ResidentAdapter {
 public:
  // Opens spec.lora.path and checks it against `model` (LoraAdapter::open). `slot` (1, 2, ...)
  // tells this adapter's cached prefixes from the others' and the base model's.
  static Expected<std::unique_ptr<ResidentAdapter>> load(const AdapterSpec& spec, std::uint32_t slot,
                                                         const ModelFile& model, PluginRegistry& registry);
  ResidentAdapter(const ResidentAdapter&) = delete;  // by_weight_ views its own strings
  ResidentAdapter& operator=(const ResidentAdapter&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::uint32_t slot() const noexcept { return slot_; }
  const std::string& path() const noexcept { return path_; }
  // Every adapted weight, A and B as f32 views of this object's memory.
  const std::vector<LoraPair>& pairs() const noexcept { return pairs_; }
  std::uint32_t rank() const noexcept { return rank_; }
  std::uint64_t bytes() const noexcept;  // of the f32 A and B
  // The pair of the weight named `weight`, NULL when the adapter leaves it alone. No allocation.
  const LoraPair* find(std::string_view weight) const noexcept;

 private:
  ResidentAdapter() = default;

  std::string name_;
  std::uint32_t slot_ = 0;
  std::string path_;
  std::uint32_t rank_ = 0;
  std::vector<LoraPair> pairs_;
  std::vector<std::vector<float>> data_;  // A, B, A, B, ... of the pairs in order
  std::vector<std::string> names_;        // their tensor names
  std::vector<lpx_tensor_view> views_;    // sized once: pairs_ point into it
  std::unordered_map<std::string_view, const LoraPair*> by_weight_;  // views of pairs_' names
};

}  // namespace lpx::core
