#include "pipeline/pipeline.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat_template/chat_template.hpp"
#include "quantize/quantization_plan.hpp"
#include "engine/device_choice.hpp"
#include "engine/engine_config.hpp"
#include "util/read_file.hpp"
#include "util/did_you_mean.hpp"

namespace lpx::core {
namespace {

const std::vector<OptionSpec>& pipeline_table_specs() {
  static const std::vector<OptionSpec> specs = {
      {"name", LPX_OPTION_STRING, false, std::nullopt, "Name shown in logs and listings", {}, {}},
      {"description", LPX_OPTION_STRING, false, std::nullopt, "What this pipeline is for", {}, {}},
  };
  return specs;
}

}  // namespace

const std::vector<OptionSpec>& engine_table_specs() {
  static const std::vector<OptionSpec> specs = {
      {"prefix_cache", LPX_OPTION_BOOL, false, true,
       "Reuse the KV cache of prompt prefixes computed before (docs/engine.md)", {}, {}},
      {"overlap_steps", LPX_OPTION_BOOL, false, true,
       "Device models: queue each decode step before the last one's tokens are read, its "
       "tokens taken on the device (docs/engine.md)", {}, {}},
      {"keep_alive_s", LPX_OPTION_INT, false, std::int64_t{300},
       "Seconds a model other than the first stays loaded without requests; -1 = until exit",
       std::pair{-1.0, 31536000.0}, {}},
      {"memory_budget_mb", LPX_OPTION_INT, false, std::int64_t{0},
       "MiB that loaded models (weights + KV cache) may hold together; 0 = the memory available "
       "at start (CPU backends), no limit on devices",
       std::pair{0.0, 1073741824.0}, {}},
  };
  return specs;
}

const std::vector<OptionSpec>& speculative_table_specs() {
  static const std::vector<OptionSpec> specs = {
      {"mode", LPX_OPTION_STRING, false, std::string("off"),
       "off; ngram: drafts from the sequence's own text; draft: from draft_model. The model verifies "
       "every draft (docs/engine.md)",
       {}, {"off", "ngram", "draft"}},
      {"draft_model", LPX_OPTION_STRING, false, std::nullopt,
       "Draft mode: a smaller model file with the model's vocabulary", {}, {}},
      {"max_draft", LPX_OPTION_INT, false, std::int64_t{kDefaultMaxDraft}, "Tokens drafted per sequence and step",
       std::pair{1.0, 32.0}, {}},
      {"ngram", LPX_OPTION_INT, false, std::int64_t{kDefaultNgram}, "Tokens matched to find a draft (ngram mode)",
       std::pair{1.0, 16.0}, {}},
      {"p_min", LPX_OPTION_FLOAT, false, kDefaultDraftPMin,
       "Draft mode: a draft stops at a token the draft model gives a lower probability", std::pair{0.0, 1.0}, {}},
  };
  return specs;
}

namespace {

std::vector<std::string> top_level_keys() {
  std::vector<std::string> keys = {"pipeline", "engine", "speculative"};
  for (const PipelineSlot& slot : pipeline_slots()) keys.emplace_back(slot.name);
  return keys;
}

// Moves the slot's own keys out of `options` (resolved together, so that an unknown key is
// reported once, against the full list of keys).
ResolvedOptions split_core_options(ResolvedOptions& options, const std::vector<OptionSpec>& core) {
  ResolvedOptions out;
  out.specs = core;
  for (const OptionSpec& spec : core) {
    if (auto it = options.values.find(spec.name); it != options.values.end()) {
      out.values.emplace(spec.name, std::move(it->second));
      options.values.erase(it);
    }
    std::erase_if(options.specs, [&](const OptionSpec& s) { return s.name == spec.name; });
  }
  return out;
}

bool is_chain_slot(const std::string& name) {
  for (const PipelineSlot& slot : pipeline_slots()) {
    if (slot.name == name) return slot.chain;
  }
  return false;
}

// Only the last sampler of a chain may choose the token, and it must: a filter after the choice
// would be ignored, and a chain that never chooses cannot produce a token.
void check_sampler_chain(const Pipeline& pipeline, Diagnostics& diagnostics) {
  std::vector<const PipelineSection*> chain;
  for (const PipelineSection& section : pipeline.sections) {
    if (section.slot == "sampler") chain.push_back(&section);
  }
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const bool selects = chain[i]->plugin->supports("sampler:selects");
    const std::string& name = chain[i]->plugin->description().name;
    if (i + 1 < chain.size() && selects) {
      diagnostics.error(chain[i]->where, "sampler '" + name +
                                             "' chooses the token, so it must be the last of "
                                             "the chain; move it to the end");
    } else if (i + 1 == chain.size() && !selects) {
      diagnostics.error(chain[i]->where,
                        "sampler '" + name + "' only filters: end the chain with one that "
                        "chooses the token (greedy or dist)");
    }
  }
}

// [model] or [[models]], not both; [[models]] names unique; a draft model belongs to one model.
void check_models(const PipelineDocument& document, const Pipeline& pipeline, Diagnostics& diagnostics) {
  const toml::node* list = document.root().get("models");
  if (list == nullptr) return;
  const SourceLocation where = document.where(*list, "models");
  if (document.root().get("model") != nullptr) {
    diagnostics.error(where, "the pipeline has both [model] and [[models]]: keep one ([[models]] "
                             "serves several models, the first being the default)");
  }
  std::vector<std::string> names;
  std::size_t count = 0;
  for (const PipelineSection& section : pipeline.sections) {
    if (section.slot != "models") continue;
    ++count;
    const auto& values = section.core_options.values;
    const auto name = values.find("name");
    const std::string shown = name != values.end()
                                  ? std::get<std::string>(name->second)
                                  : std::filesystem::path(std::get<std::string>(values.at("path"))).stem().string();
    if (std::find(names.begin(), names.end(), shown) != names.end()) {
      diagnostics.error(section.where, "two [[models]] are named '" + shown +
                                           "': give one a different `name`");
    }
    names.push_back(shown);
  }
  const auto mode = pipeline.speculative.values.find("mode");
  if (count > 1 && mode != pipeline.speculative.values.end() &&
      std::get<std::string>(mode->second) == "draft") {
    diagnostics.error(where, "[speculative] mode = \"draft\" drafts for one model; [[models]] lists " +
                                 std::to_string(count) + " (use mode = \"ngram\", or one model)");
  }
}

// A model's chat_template must name a readable template the engine can render.
void check_chat_template(const PipelineDocument& document, const Pipeline& pipeline,
                         Diagnostics& diagnostics) {
  for (const PipelineSection& model : pipeline.sections) {
    if (model.slot != "model" && model.slot != "models") continue;
    auto it = model.core_options.values.find("chat_template");
    if (it == model.core_options.values.end()) continue;
    const std::string& path = std::get<std::string>(it->second);
    const toml::node* node =
        model.slot == "model" ? document.root().at_path("model.chat_template").node() : nullptr;
    const SourceLocation where = node ? document.where(*node, "model.chat_template") : model.where;
    auto text = read_whole_file(path);
    if (!text) {
      diagnostics.error(where, "cannot read chat template file '" + path + "'");
      continue;
    }
    if (auto parsed = ChatTemplate::parse(*text); !parsed) {
      diagnostics.error(where, path + ": " + parsed.error().message);
    }
  }
}

// A plugin's message "top_p: must be ..." points at top_p's line when the table sets it.
SourceLocation where_plugin_message(const PipelineDocument& document, const toml::table& table,
                                    const std::string& section, const SourceLocation& fallback,
                                    const std::string& message) {
  const size_t colon = message.find(':');
  if (colon == std::string::npos) return fallback;
  const std::string option = message.substr(0, colon);
  if (const toml::node* node = table.get(option)) {
    return document.where(*node, section + "." + option);
  }
  return fallback;
}

void validate_slot(const PipelineDocument& document, const PipelineSlot& slot,
                   const toml::table& table, PluginRegistry& registry, Pipeline& pipeline,
                   Diagnostics& diagnostics);

// [backend] device = "auto" | "cpu" | "cuda" | "cuda:N": the device picks the plugin (checked
// now: asking for CUDA where it cannot run is an error saying why), and the rest of the table
// is that plugin's options.
void validate_device_backend(const PipelineDocument& document, const PipelineSlot& slot,
                             const toml::table& table, PluginRegistry& registry,
                             Pipeline& pipeline, Diagnostics& diagnostics) {
  const std::string section = slot.name;
  const toml::node& device_node = *table.get("device");
  const SourceLocation where = document.where(device_node, section + ".device");
  if (table.get("plugin") != nullptr) {
    diagnostics.error(where, "[" + section + "] sets both 'plugin' and 'device'; keep one "
                             "('device' picks the plugin: cpu or cuda)");
    return;
  }
  const auto* device = device_node.as_string();
  if (device == nullptr) {
    diagnostics.error(where, "'" + section + ".device' must be a string: auto, cpu, cuda or cuda:N");
    return;
  }
  if (std::string invalid = check_device(device->get()); !invalid.empty()) {
    diagnostics.error(where, "'" + section + ".device' " + invalid);
    return;
  }
  auto choice = backend_for_device(device->get(), "", registry);
  if (!choice) {
    diagnostics.error(where, "[" + section + "] " + choice.error().message);
    return;
  }
  toml::table plugin_table = table;
  plugin_table.erase("device");
  plugin_table.insert("plugin", choice->plugin);
  // The device's own options (gpu = N) unless the table sets them.
  for (const auto& [key, value] : choice->options) {
    if (!plugin_table.contains(key)) plugin_table.insert(key, std::get<std::int64_t>(value));
  }
  const std::size_t before = pipeline.sections.size();
  validate_slot(document, slot, plugin_table, registry, pipeline, diagnostics);
  // Point diagnostics and the resolved section at the device key the user wrote.
  if (pipeline.sections.size() > before) pipeline.sections.back().where = where;
}

// Validates one slot table; adds a section when its plugin could be loaded and checked.
void validate_slot(const PipelineDocument& document, const PipelineSlot& slot,
                   const toml::table& table, PluginRegistry& registry, Pipeline& pipeline,
                   Diagnostics& diagnostics) {
  const std::string section = slot.name;
  const toml::node* plugin_node = table.get("plugin");
  if (slot.kind == LPX_KIND_QUANT_BACKEND && table.get("device") != nullptr) {
    validate_device_backend(document, slot, table, registry, pipeline, diagnostics);
    return;
  }
  if (plugin_node == nullptr) {
    diagnostics.error(document.where_table(table, section),
                      "[" + section + "] is missing required key 'plugin' (the name of a " +
                          kind_name(slot.kind) + " plugin)");
    return;
  }
  const auto* plugin_name = plugin_node->as_string();
  if (plugin_name == nullptr) {
    diagnostics.error(document.where(*plugin_node, section + ".plugin"),
                      "'" + section + ".plugin' must be a string naming a plugin");
    return;
  }
  const SourceLocation plugin_where = document.where(*plugin_node, section + ".plugin");
  auto plugin = registry.load(plugin_name->get());
  if (!plugin) {
    diagnostics.error(plugin_where, plugin.error().message);
    return;
  }
  const PluginDescription& description = plugin.value()->description();
  if (description.kind != slot.kind) {
    diagnostics.error(plugin_where, "plugin '" + description.name + "' is a " +
                                        kind_name(description.kind) + " plugin, but [" + section +
                                        "] needs a " + kind_name(slot.kind) + " plugin");
    return;
  }
  std::vector<OptionSpec> specs = description.options;
  for (const OptionSpec& core_option : slot.core_options) {
    for (const OptionSpec& own : description.options) {
      if (own.name == core_option.name) {
        diagnostics.error(plugin_where, "plugin '" + description.name + "' declares option '" +
                                            own.name + "', which [" + section + "] reserves");
        return;
      }
    }
    specs.push_back(core_option);
  }
  const size_t errors_before = diagnostics.items().size();
  ResolvedOptions options =
      resolve_options(document, table, section, specs, {"plugin"}, diagnostics);
  ResolvedOptions core_options = split_core_options(options, slot.core_options);
  if (diagnostics.items().size() == errors_before) {
    if (auto valid = plugin.value()->validate_options(options); !valid) {
      diagnostics.error(where_plugin_message(document, table, section, plugin_where, valid.error().message),
                        "[" + section + "] plugin '" + description.name + "': " + valid.error().message);
    }
  }
  pipeline.sections.push_back(
      {section, *plugin, std::move(options), std::move(core_options), plugin_where});
}

}  // namespace

namespace {

// The keys of [model] and of each [[models]] table that the core reads.
std::vector<OptionSpec> model_core_options(bool named) {
  std::vector<OptionSpec> specs = {
      {"path", LPX_OPTION_STRING, true, std::nullopt, "Model file (or Hugging Face directory) to load", {}, {}},
      {"chat_template", LPX_OPTION_STRING, false, std::nullopt,
       "Jinja file that replaces the model's own chat template", {}, {}},
      {"lora", LPX_OPTION_STRING_LIST, false, std::nullopt,
       "LoRA adapters (llama.cpp's GGUF adapter files) merged into the weights as the model "
       "loads: \"FILE\" or \"FILE@SCALE\" each",
       {}, {}},
      {"adapters", LPX_OPTION_STRING_LIST, false, std::nullopt,
       "LoRA adapters (llama.cpp's GGUF adapter files) kept beside the weights for the requests "
       "that name them (model \"MODEL:NAME\"): \"NAME=FILE\" or \"NAME=FILE@SCALE\" each",
       {}, {}},
      {"quantize", LPX_OPTION_STRING, false, std::nullopt,
       "Quantize the model's F32/F16/BF16 weights as it loads, as `quantize --type` would (a "
       "Hugging Face directory at a quantized model's size and speed)",
       {}, quant_mix_choices()},
      {"context_size", LPX_OPTION_INT, false, std::int64_t{0},
       "Positions per sequence (prompt + answer); 0 = what the model was trained on, at most "
       "8192", std::pair{0.0, 1048576.0}, {}},
      {"kv_cache_tokens", LPX_OPTION_INT, false, std::int64_t{0},
       "Positions in the shared KV cache; 0 = one full context", std::pair{0.0, 16777216.0}, {}},
      {"max_sequences", LPX_OPTION_INT, false, std::int64_t{4},
       "Requests decoded together in each step", std::pair{1.0, 1024.0}, {}},
      {"batch_tokens", LPX_OPTION_INT, false, std::int64_t{512},
       "Most tokens per step (prefill chunks plus one per decoding sequence)",
       std::pair{1.0, 65536.0}, {}},
      {"mode", LPX_OPTION_STRING, false, std::string("latency"),
       "latency = while sequences decode, prefill at most 64 prompt tokens per step (smooth "
       "streams); throughput = fill every step up to batch_tokens",
       {}, {"latency", "throughput"}}};
  if (named) {
    specs.push_back({"name", LPX_OPTION_STRING, false, std::nullopt,
                     "What requests call the model (their `model` field); default: the file's stem",
                     {}, {}});
  }
  return specs;
}

}  // namespace

const std::vector<PipelineSlot>& pipeline_slots() {
  static const std::vector<PipelineSlot> slots = {
      {"model", LPX_KIND_MODEL_FORMAT, false, model_core_options(false)},
      {"models", LPX_KIND_MODEL_FORMAT, false, model_core_options(true), true},
      {"backend", LPX_KIND_QUANT_BACKEND, false, {}},
      {"sampler", LPX_KIND_SAMPLER, false, {}, true},
      {"transport", LPX_KIND_TRANSPORT, true, {}},
  };
  return slots;
}

const PipelineSection* Pipeline::find(const std::string& slot) const {
  for (const PipelineSection& section : sections) {
    if (section.slot == slot) return &section;
  }
  return nullptr;
}

namespace {

Expected<Pipeline, Diagnostics> validate_pipeline(const PipelineDocument& document,
                                                  Diagnostics diagnostics,
                                                  PluginRegistry& registry) {
  const std::string& path = document.path();
  Pipeline pipeline;
  pipeline.path = path;
  pipeline.name = std::filesystem::path(path).stem().string();
  const toml::table& root = document.root();
  const std::vector<std::string> known = top_level_keys();

  for (const auto& [key, node] : root) {
    const std::string name(key.str());
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      diagnostics.error(document.where_key(key, name), "unknown table '" + name + "'" +
                                                        did_you_mean(name, known) +
                                                        "; known tables: " + join_or_none(known));
    } else if (!node.is_table() && !(node.is_array_of_tables() && is_chain_slot(name))) {
      diagnostics.error(document.where(node, name), "'" + name + "' must be a table ([" + name +
                                                        "]), not a plain value");
    }
  }

  if (const toml::table* table = root.get_as<toml::table>("pipeline")) {
    ResolvedOptions options =
        resolve_options(document, *table, "pipeline", pipeline_table_specs(), {}, diagnostics);
    if (auto it = options.values.find("name"); it != options.values.end()) {
      pipeline.name = std::get<std::string>(it->second);
    }
    if (auto it = options.values.find("description"); it != options.values.end()) {
      pipeline.description = std::get<std::string>(it->second);
    }
  }

  if (const toml::table* table = root.get_as<toml::table>("engine")) {
    pipeline.engine = resolve_options(document, *table, "engine", engine_table_specs(), {}, diagnostics);
  }
  if (const toml::table* table = root.get_as<toml::table>("speculative")) {
    pipeline.speculative =
        resolve_options(document, *table, "speculative", speculative_table_specs(), {}, diagnostics);
    const auto& values = pipeline.speculative.values;
    const auto mode = values.find("mode");
    const bool draft_mode = mode != values.end() && std::get<std::string>(mode->second) == "draft";
    if (draft_mode != values.contains("draft_model")) {
      diagnostics.error(document.where_table(*table, "speculative"),
                        draft_mode ? "[speculative] mode = \"draft\" needs draft_model = \"FILE.gguf\""
                                   : "[speculative] draft_model is read only with mode = \"draft\"");
    }
  }

  for (const PipelineSlot& slot : pipeline_slots()) {
    const toml::node* node = root.get(slot.name);
    if (node == nullptr) {
      if (slot.required) {
        diagnostics.error({path, 1, 1}, std::string("the pipeline has no [") + slot.name +
                                            "] table; it needs one naming a " +
                                            kind_name(slot.kind) + " plugin");
      }
      continue;
    }
    if (const toml::table* table = node->as_table()) {
      validate_slot(document, slot, *table, registry, pipeline, diagnostics);
    } else if (const toml::array* chain = node->as_array(); chain && slot.chain) {
      for (const toml::node& link : *chain) {
        if (const toml::table* link_table = link.as_table()) {
          validate_slot(document, slot, *link_table, registry, pipeline, diagnostics);
        }
      }
    }
  }
  check_sampler_chain(pipeline, diagnostics);
  check_models(document, pipeline, diagnostics);

  check_chat_template(document, pipeline, diagnostics);
  if (!diagnostics.empty()) {
    diagnostics.sort_by_position();
    return unexpected(std::move(diagnostics));
  }
  return pipeline;
}

}  // namespace

Expected<Pipeline, Diagnostics> load_pipeline(const std::string& path,
                                              const std::vector<std::string>& overrides,
                                              PluginRegistry& registry) {
  Diagnostics diagnostics;
  PipelineDocument document;
  if (!document.load(path, overrides, diagnostics)) return unexpected(std::move(diagnostics));
  return validate_pipeline(document, std::move(diagnostics), registry);
}

Expected<Pipeline, Diagnostics> load_pipeline_text(const std::string& path, const std::string& text,
                                                   const std::vector<std::string>& overrides,
                                                   PluginRegistry& registry) {
  Diagnostics diagnostics;
  PipelineDocument document;
  if (!document.load_text(path, text, overrides, diagnostics)) {
    return unexpected(std::move(diagnostics));
  }
  return validate_pipeline(document, std::move(diagnostics), registry);
}

}  // namespace lpx::core
