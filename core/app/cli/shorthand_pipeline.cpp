#include "cli/shorthand_pipeline.hpp"

#include <sstream>

#include "engine/device_choice.hpp"
#include "model/model_file.hpp"

namespace lpx::cli {
namespace {

// The CPU backends run with 16-bit activations, as pipelines/chat.toml does (see there: the
// model's own arithmetic within 1e-6 KL; --set backend.activations=q8 for llama.cpp's bits and
// speed); the GPU computes with f32 activations.
toml::table backend_table(const core::BackendChoice& choice) {
  toml::table table{{"plugin", choice.plugin}};
  if (choice.plugin == "cpu" || choice.plugin == "cpu-scalar") table.insert("activations", "i16");
  if (choice.plugin == "cuda") table.insert("activations", "f32");
  if (auto it = choice.options.find("gpu"); it != choice.options.end()) {
    table.insert("gpu", std::get<std::int64_t>(it->second));
  }
  return table;
}

}  // namespace

core::Expected<core::Pipeline, core::Diagnostics> load_shorthand_pipeline(
    const std::string& name, const ShorthandModel& m, toml::table transport,
    const std::vector<std::string>& overrides, core::PluginRegistry& registry) {
  auto backend = core::backend_for_device(m.device, m.backend, registry);
  if (!backend) {
    core::Diagnostics diagnostics;
    diagnostics.error({"--device " + m.device, 0, 0}, backend.error().message);
    return core::unexpected(std::move(diagnostics));
  }
  auto mode = m.speculative.resolved_mode();
  if (!mode) {
    core::Diagnostics diagnostics;
    diagnostics.error({"--speculative / --draft-model", 0, 0}, mode.error().message);
    return core::unexpected(std::move(diagnostics));
  }
  // Room in the KV cache for every sequence at full context: requests never wait for cache.
  const auto kv_tokens = static_cast<std::int64_t>(m.context_size) * m.max_sequences;
  const auto model_table = [&](const std::string& path) {
    // The format plugin that recognises the path (gguf for a file, safetensors for a Hugging
    // Face directory); when none does, gguf, whose error then names the file.
    auto format = core::detect_model_format(path, registry);
    const std::string plugin = format ? format.value()->library().description().name : "gguf";
    toml::table table{{"plugin", plugin},
                      {"path", path},
                      {"context_size", static_cast<std::int64_t>(m.context_size)},
                      {"max_sequences", static_cast<std::int64_t>(m.max_sequences)},
                      {"kv_cache_tokens", kv_tokens},
                      {"mode", m.mode}};
    if (!m.quantize.empty()) table.insert("quantize", m.quantize);
    if (!m.loras.empty()) {
      toml::array loras;
      for (const std::string& lora : m.loras) loras.push_back(lora);
      table.insert("lora", std::move(loras));
    }
    if (!m.adapters.empty() && path == m.model_path) {  // adapters are made for one model
      toml::array adapters;
      for (const std::string& adapter : m.adapters) adapters.push_back(adapter);
      table.insert("adapters", std::move(adapters));
    }
    return table;
  };
  std::string described = "lpx-pipeline " + name + " --model " + m.model_path;
  for (const std::string& path : m.more_models) described += " --model " + path;
  toml::table document{
      {"pipeline", toml::table{{"name", name}, {"description", described}}},
      {"backend", backend_table(*backend)},
      {"sampler", toml::table{{"plugin", "greedy"}}},
      {"transport", std::move(transport)}};
  if (m.more_models.empty()) {
    document.insert("model", model_table(m.model_path));
  } else {
    toml::array models{model_table(m.model_path)};
    for (const std::string& path : m.more_models) models.push_back(model_table(path));
    document.insert("models", std::move(models));
  }
  if (*mode != "off") {
    toml::table speculative{{"mode", *mode}};
    if (*mode == "draft") speculative.insert("draft_model", m.speculative.draft_model);
    document.insert("speculative", std::move(speculative));
  }
  std::ostringstream text;
  text << document;
  return core::load_pipeline_text("lpx-pipeline " + name, text.str(), overrides, registry);
}

}  // namespace lpx::cli
