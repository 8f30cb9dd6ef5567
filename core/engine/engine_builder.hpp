// Assembles an Engine from its parts: the opened model file, its tokenizer and chat template,
// the backend instance and the sampler chain. Used by `run` (from a pipeline) and by `generate`
// (from command-line flags).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/sampler_chain_factory.hpp"
#include "model/lora_merge.hpp"
#include "model/resident_adapter.hpp"
#include "model/model_file.hpp"
#include "quantize/quantization_plan.hpp"
#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct EngineInputs {
  std::unique_ptr<ModelFile> file;
  // Quantize the model's F32/F16/BF16 tensors as it loads ([model] quantize, --quantize).
  std::optional<QuantMix> quantize;
  // LoRA adapters merged into the weights as the model loads, before any quantizing ([model]
  // lora, --lora).
  std::vector<LoraSpec> loras;
  // LoRA adapters kept beside the weights for the requests that name them ([model] adapters).
  std::vector<AdapterSpec> adapters;
  std::optional<std::string> chat_template_path;  // replaces the model's template
  std::unique_ptr<ModelFile> draft_file;  // speculative decoding's draft model, if any
  std::shared_ptr<PluginInstance> backend;
  std::vector<SamplerLinkSpec> sampler_chain;     // the last link selects
  EngineConfig config;
};

// `[model] adapters` as written: each "NAME=FILE[@SCALE]" parsed, the names unique.
Expected<std::vector<AdapterSpec>> adapter_specs(const std::vector<std::string>& texts);

// `registry` must outlive the engine (per-request sampler overrides load plugins through it).
Expected<std::unique_ptr<Engine>> build_engine(EngineInputs inputs, PluginRegistry& registry);

// The engine of one of the pipeline's models (its [model] or one of its [[models]]), with
// instances of its own of the pipeline's plugins: the model's format, the backend and the
// sampler chain. A missing [backend] means the `cpu` plugin with its defaults, a missing
// [sampler] means greedy.
Expected<std::unique_ptr<Engine>> build_model_engine(const Pipeline& pipeline,
                                                     const PipelineSection& model,
                                                     PluginRegistry& registry);

// A plugin of the registry, created with its default options, changed by `options` (checked
// against the plugin's declared ranges). For defaults, the CLI and tools.
Expected<SamplerLinkSpec> default_instance(
    PluginRegistry& registry, const std::string& name,
    const std::map<std::string, OptionValue>& options = {});

}  // namespace lpx::core
