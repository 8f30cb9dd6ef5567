#include "engine/engine_builder.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "model/builtin_chat_templates.hpp"
#include "quantize/quantize_on_load.hpp"
#include "tokenizer/vocabulary.hpp"
#include "util/read_file.hpp"

namespace lpx::core {
namespace {

std::int64_t int_option(const ResolvedOptions& options, const char* name, std::int64_t fallback) {
  auto it = options.values.find(name);
  return it == options.values.end() ? fallback : std::get<std::int64_t>(it->second);
}

}  // namespace

Expected<SamplerLinkSpec> default_instance(PluginRegistry& registry, const std::string& name,
                                           const std::map<std::string, OptionValue>& options) {
  auto library = registry.load(name);
  if (!library) return unexpected(library.error());
  SamplerLinkSpec spec;
  spec.library = *library;
  spec.options = default_options(spec.library->description().options);
  for (const auto& [key, value] : options) {
    auto it = std::find_if(spec.options.specs.begin(), spec.options.specs.end(),
                           [&](const OptionSpec& s) { return s.name == key; });
    if (it == spec.options.specs.end()) {
      return invalid_argument("plugin '" + name + "' has no option '" + key + "'");
    }
    if (it->type == LPX_OPTION_INT && it->range) {
      const auto v = static_cast<double>(std::get<std::int64_t>(value));
      if (v < it->range->first || v > it->range->second) {
        return invalid_argument(name + "." + key + " = " + to_toml_text(value) + " is out of range");
      }
    }
    spec.options.values[key] = value;
  }
  if (auto valid = spec.library->validate_options(spec.options); !valid) {
    return unexpected(valid.error());
  }
  auto instance = spec.library->create(spec.options);
  if (!instance) return unexpected(instance.error());
  spec.instance = std::move(*instance);
  return spec;
}

Expected<std::vector<AdapterSpec>> adapter_specs(const std::vector<std::string>& texts) {
  std::vector<AdapterSpec> specs;
  for (const std::string& text : texts) {
    auto spec = parse_adapter_spec(text);
    if (!spec) return unexpected(spec.error());
    for (const AdapterSpec& earlier : specs) {
      if (earlier.name == spec->name) return invalid_argument("two adapters are named '" + spec->name + "'");
    }
    specs.push_back(std::move(*spec));
  }
  return specs;
}

Expected<std::unique_ptr<Engine>> build_engine(EngineInputs inputs, PluginRegistry& registry) {
  for (const LoraSpec& lora : inputs.loras) {
    auto merged = merge_lora(*inputs.file, lora, registry);
    if (!merged) return unexpected(merged.error().with_context("lora"));
    spdlog::info("{}: LoRA adapter {} merged at scale {} (rank {}, alpha {}): {} weights changed",
                 inputs.file->path(), lora.path, lora.scale, merged->rank, merged->alpha, merged->tensors);
  }
  EngineParts parts;
  for (const AdapterSpec& spec : inputs.adapters) {
    const auto slot = static_cast<std::uint32_t>(parts.adapters.size() + 1);
    auto adapter = ResidentAdapter::load(spec, slot, *inputs.file, registry);
    if (!adapter) return unexpected(adapter.error().with_context("adapters"));
    parts.adapters.push_back(std::move(*adapter));
  }
  if (inputs.quantize) {
    const auto started = std::chrono::steady_clock::now();
    auto done = quantize_on_load(*inputs.file, *inputs.quantize);
    if (!done) return unexpected(done.error());
    spdlog::info("{}: quantized to {} as it loaded: {} of {} tensors, {:.1f} MiB -> {:.1f} MiB in {:.1f} s",
                 inputs.file->path(), quant_mix_name(*inputs.quantize), done->converted, done->tensors,
                 static_cast<double>(done->input_bytes) / (1 << 20),
                 static_cast<double>(done->output_bytes) / (1 << 20),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  auto vocabulary = load_vocabulary(*inputs.file);
  if (!vocabulary) return unexpected(vocabulary.error().with_context(inputs.file->path()));
  auto tokenizer = Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) return unexpected(tokenizer.error().with_context(inputs.file->path()));
  parts.tokenizer = std::move(*tokenizer);

  if (inputs.chat_template_path) {
    auto source = read_whole_file(*inputs.chat_template_path);
    if (!source) return unexpected(source.error());
    auto parsed = ChatTemplate::parse(*source);
    if (!parsed) return unexpected(parsed.error().with_context(*inputs.chat_template_path));
    parts.chat_template = std::move(*parsed);
    parts.chat_template_origin = *inputs.chat_template_path;
    parts.chat_template_source = std::move(*source);
  } else if (inputs.file->has("tokenizer.chat_template")) {
    auto source = inputs.file->get_string("tokenizer.chat_template");
    if (!source) return unexpected(source.error().with_context(inputs.file->path()));
    auto parsed = ChatTemplate::parse(*source);
    if (!parsed) {
      // Not fatal for plain-prompt use; chat requests will say why they cannot run.
      spdlog::warn("{}: the model's chat template cannot be used: {}", inputs.file->path(),
                   parsed.error().message);
    } else {
      parts.chat_template = std::move(*parsed);
      parts.chat_template_origin = inputs.file->path();
      parts.chat_template_source = std::move(*source);
    }
  } else if (auto architecture = inputs.file->get_string("general.architecture")) {
    if (auto builtin = builtin_chat_template(*architecture)) {
      auto parsed = ChatTemplate::parse(builtin->source);
      if (!parsed) return unexpected(parsed.error().with_context(std::string(builtin->origin)));
      spdlog::info("{}: the model file has no chat template; chat uses {} ([model] chat_template "
                   "overrides it)", inputs.file->path(), builtin->origin);
      parts.chat_template = std::move(*parsed);
      parts.chat_template_origin = std::string(builtin->origin);
      parts.chat_template_source = std::string(builtin->source);
    }
  }
  auto backend = Backend::adopt(std::move(inputs.backend));
  if (!backend) return unexpected(backend.error());
  parts.backend = std::make_unique<Backend>(std::move(*backend));
  // Links that read text (a grammar) learn the model's vocabulary once, here.
  auto sampler_vocabulary = std::make_shared<const SamplerVocabulary>(*parts.tokenizer);
  for (const SamplerLinkSpec& link : inputs.sampler_chain) {
    if (auto bound = sampler_vocabulary->bind(*link.instance); !bound) return unexpected(bound.error());
  }
  parts.samplers = std::make_unique<SamplerChainFactory>(std::move(inputs.sampler_chain), registry,
                                                         std::move(sampler_vocabulary));
  parts.file = std::move(inputs.file);
  parts.draft_file = std::move(inputs.draft_file);
  return Engine::create(std::move(parts), inputs.config);
}

Expected<std::unique_ptr<Engine>> build_model_engine(const Pipeline& pipeline,
                                                     const PipelineSection& model,
                                                     PluginRegistry& registry) {
  const std::string where = "[" + model.slot + "] ";
  EngineInputs inputs;
  auto format = model.plugin->create(model.options);
  if (!format) return unexpected(format.error().prefixed(where));
  const auto& values = model.core_options.values;
  const std::string path = std::get<std::string>(values.at("path"));
  auto file = ModelFile::open_with(*format, path);
  if (!file) return unexpected(file.error().prefixed(where));
  inputs.file = std::move(*file);
  if (auto it = values.find("chat_template"); it != values.end()) {
    inputs.chat_template_path = std::get<std::string>(it->second);
  }
  if (auto it = values.find("lora"); it != values.end()) {
    for (const std::string& text : std::get<std::vector<std::string>>(it->second)) {
      auto spec = parse_lora_spec(text);
      if (!spec) return unexpected(spec.error().prefixed(where));
      inputs.loras.push_back(*spec);
    }
  }
  if (auto it = values.find("adapters"); it != values.end()) {
    auto specs = adapter_specs(std::get<std::vector<std::string>>(it->second));
    if (!specs) return unexpected(specs.error().prefixed(where + "adapters: "));
    inputs.adapters = std::move(*specs);
  }
  if (auto it = values.find("quantize"); it != values.end()) {
    inputs.quantize = parse_quant_mix(std::get<std::string>(it->second));  // a checked choice
  }
  const ResolvedOptions& o = model.core_options;
  inputs.config.context_size = static_cast<std::uint32_t>(int_option(o, "context_size", 0));
  inputs.config.kv_cache_tokens = static_cast<std::uint32_t>(int_option(o, "kv_cache_tokens", 0));
  inputs.config.max_sequences = static_cast<std::uint32_t>(int_option(o, "max_sequences", 4));
  inputs.config.batch_tokens = static_cast<std::uint32_t>(int_option(o, "batch_tokens", 512));
  if (auto mode = o.values.find("mode");
      mode != o.values.end() && std::get<std::string>(mode->second) == "throughput") {
    inputs.config.prefill_tokens_while_decoding = inputs.config.batch_tokens;
  }
  // Every engine has instances of its own: a backend holds the model's weights and threads,
  // and sampler links bind to the model's vocabulary.
  for (const PipelineSection& section : pipeline.sections) {
    if (section.slot != "backend" && section.slot != "sampler") continue;
    auto instance = section.plugin->create(section.options);
    if (!instance) return unexpected(instance.error().prefixed("[" + section.slot + "] "));
    if (section.slot == "backend") {
      inputs.backend = std::move(*instance);
    } else {
      inputs.sampler_chain.push_back({section.plugin, section.options, std::move(*instance)});
    }
  }
  if (auto it = pipeline.engine.values.find("prefix_cache"); it != pipeline.engine.values.end()) {
    inputs.config.prefix_cache = std::get<bool>(it->second);
  }
  if (auto it = pipeline.engine.values.find("overlap_steps"); it != pipeline.engine.values.end()) {
    inputs.config.overlap_steps = std::get<bool>(it->second);
  }
  const auto& spec = pipeline.speculative.values;
  const auto mode = spec.find("mode");
  if (mode != spec.end() && std::get<std::string>(mode->second) != "off") {
    inputs.config.max_draft = static_cast<std::uint32_t>(int_option(pipeline.speculative, "max_draft", kDefaultMaxDraft));
    inputs.config.ngram = static_cast<std::uint32_t>(int_option(pipeline.speculative, "ngram", kDefaultNgram));
    if (auto p_min = spec.find("p_min"); p_min != spec.end()) {
      inputs.config.draft_p_min = static_cast<float>(std::get<double>(p_min->second));
    }
  }
  if (mode != spec.end() && std::get<std::string>(mode->second) == "draft") {
    // The pipeline's checks made sure draft_model is set.
    const std::string draft_path = std::get<std::string>(spec.at("draft_model"));
    auto draft = ModelFile::open_with(*format, draft_path);
    if (!draft) return unexpected(draft.error().prefixed("[speculative] draft_model: "));
    inputs.draft_file = std::move(*draft);
  }
  if (!inputs.backend) {
    auto cpu = default_instance(registry, "cpu");
    if (!cpu) return unexpected(cpu.error().prefixed("[backend] (default 'cpu'): "));
    inputs.backend = cpu->instance;
  }
  if (inputs.sampler_chain.empty()) {
    auto greedy = default_instance(registry, "greedy");
    if (!greedy) return unexpected(greedy.error().prefixed("[sampler] (default 'greedy'): "));
    inputs.sampler_chain.push_back(std::move(*greedy));
  }
  return build_engine(std::move(inputs), registry);
}

}  // namespace lpx::core
