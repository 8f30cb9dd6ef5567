// A LoRA adapter kept beside the model's unchanged weights and applied to the requests that
// name it (lpx_request.adapter; an API's `model` field "MODEL:ADAPTER", as vLLM's multi-LoRA
// serving reads it). Several stay resident at once, and one batch may mix them: the forward pass
// adds s * B (A x) to the product of each adapted weight for the rows of the requests that use
// the adapter (engine/transformer_forward.cpp). Unlike a merge, it works beside quantized
// weights, and the base model answers unchanged the requests that name no adapter.
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
  const LoraAdapter& lora() const noexcept { return lora_; }
  // The pair of the weight named `weight`, NULL when the adapter leaves it alone. No allocation.
  const LoraPair* find(std::string_view weight) const noexcept;

 private:
  ResidentAdapter(std::string name, std::uint32_t slot, LoraAdapter lora);

  std::string name_;
  std::uint32_t slot_;
  LoraAdapter lora_;
  std::unordered_map<std::string_view, const LoraPair*> by_weight_;  // views of lora_'s names
};

}  // namespace lpx::core
