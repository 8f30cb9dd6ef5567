#include "serving/served_models.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <system_error>

#include "engine/engine_builder.hpp"
#include "engine/engine_c_api.hpp"
#include "model/hyperparameters.hpp"
#include "model/model_file.hpp"
#include "pipeline/pipeline_text.hpp"
#include "quantize/quantize_on_load.hpp"
#include "util/model_path.hpp"

namespace lpx::core {
namespace {

std::int64_t int_value(const ResolvedOptions& options, const char* name, std::int64_t fallback) {
  auto it = options.values.find(name);
  return it == options.values.end() ? fallback : std::get<std::int64_t>(it->second);
}

std::uint64_t file_bytes(const std::string& path) { return model_bytes(path); }

// The model as it is now: a reload reopens a model whose file (or any file of whose directory)
// was replaced.
std::string file_state(const std::string& path) { return model_state(path); }

// Weights (the file, or what [model] quantize leaves of it) plus an f16 KV cache for every
// position the engine will hold.
Expected<std::pair<std::uint64_t, std::uint32_t>> estimate(const PipelineSection& model,
                                                           const std::string& path,
                                                           const std::vector<ServedAdapter>& adapters) {
  auto format = model.plugin->create(model.options);
  if (!format) return unexpected(format.error().prefixed("[" + model.slot + "] "));
  auto file = ModelFile::open_with(*format, path);
  if (!file) return unexpected(file.error().prefixed("[" + model.slot + "] "));
  auto h = read_hyperparameters(**file);
  if (!h) return unexpected(h.error().with_context(path));
  const auto& o = model.core_options;
  std::uint64_t context = static_cast<std::uint64_t>(int_value(o, "context_size", 0));
  if (context == 0) context = std::min<std::uint64_t>(h->n_ctx_train, 8192);
  const std::uint64_t positions =
      std::max<std::uint64_t>(context, static_cast<std::uint64_t>(int_value(o, "kv_cache_tokens", 0)));
  const std::uint64_t per_position =
      std::uint64_t{h->n_layer} * h->n_head_kv * (std::uint64_t{h->head_dim} + h->head_dim_v) * 2;
  std::uint64_t weights = file_bytes(path);
  if (auto it = o.values.find("quantize"); it != o.values.end()) {  // quantized as it loads
    auto bytes = quantized_tensor_bytes(**file, *parse_quant_mix(std::get<std::string>(it->second)));
    if (!bytes) return unexpected(bytes.error().prefixed("[" + model.slot + "] quantize: "));
    weights = *bytes;
  }
  // Resident beside them in f32: at most twice an f16 adapter's file.
  for (const ServedAdapter& adapter : adapters) weights += 2 * file_bytes(adapter.path);
  return std::pair{weights + positions * per_position, static_cast<std::uint32_t>(context)};
}

std::string model_name(const PipelineSection& model, const std::string& path) {
  if (auto it = model.core_options.values.find("name"); it != model.core_options.values.end()) {
    return std::get<std::string>(it->second);
  }
  return std::filesystem::path(path).stem().string();
}

// The adapters of [model] adapters, each file checked now: a model that names a missing one is
// refused when the pipeline loads, not when a request first needs it.
Expected<std::vector<ServedAdapter>> served_adapters(const PipelineSection& section, const std::string& model_name) {
  std::vector<ServedAdapter> out;
  auto it = section.core_options.values.find("adapters");
  if (it == section.core_options.values.end()) return out;
  auto specs = adapter_specs(std::get<std::vector<std::string>>(it->second));
  if (!specs) return unexpected(specs.error().prefixed("[" + section.slot + "] adapters: "));
  for (const AdapterSpec& spec : *specs) {
    std::error_code error;
    if (!std::filesystem::is_regular_file(spec.lora.path, error)) {
      return not_found("[" + section.slot + "] adapters: " + spec.name + ": " + spec.lora.path + ": no such file");
    }
    out.push_back({spec.name, model_name + ":" + spec.name, spec.lora.path});
  }
  return out;
}

// Everything that shapes the model's engine, as text: a reload reopens it when any of it, or
// the model's or an adapter's file, changed.
std::string definition(const Pipeline& pipeline, const PipelineSection& model, const std::string& path,
                       const std::vector<ServedAdapter>& adapters) {
  std::string text = section_toml(model) + "\n# file " + file_state(path) + "\n";
  for (const ServedAdapter& adapter : adapters) text += "# adapter " + file_state(adapter.path) + "\n";
  for (const PipelineSection& section : pipeline.sections) {
    if (section.slot == "backend" || section.slot == "sampler") text += section_toml(section);
  }
  Pipeline tables;
  tables.engine = pipeline.engine;
  tables.speculative = pipeline.speculative;
  return text + core_tables_toml(tables);
}

std::optional<std::uint64_t> read_number(const char* path) {
  std::ifstream in(path);
  std::uint64_t value = 0;
  if (in >> value) return value;
  return std::nullopt;  // missing, or "max"
}

// What this process may still use: the machine's MemAvailable, and within a container its
// cgroup's limit less what the cgroup uses (v2, else v1; a v1 "no limit" is a huge number).
std::uint64_t mem_available_bytes() {
  std::uint64_t available = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") available = kib * 1024;
  }
  for (const auto& [limit_file, usage_file] :
       {std::pair{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
        std::pair{"/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"}}) {
    const auto limit = read_number(limit_file);
    const auto usage = read_number(usage_file);
    if (!limit || !usage) continue;
    if (*limit < (std::uint64_t{1} << 60)) available = std::min(available, *limit > *usage ? *limit - *usage : 0);
    break;
  }
  return available;
}

}  // namespace

Expected<std::vector<ServedModel>> served_models(const Pipeline& pipeline, PluginRegistry& registry) {
  auto shared = std::make_shared<const Pipeline>(pipeline);
  std::vector<ServedModel> out;
  for (std::size_t i = 0; i < shared->sections.size(); ++i) {
    const PipelineSection& section = shared->sections[i];
    if (section.slot != "model" && section.slot != "models") continue;
    const std::string path = std::get<std::string>(section.core_options.values.at("path"));
    ServedModel m;
    m.name = model_name(section, path);
    m.path = path;
    auto adapters = served_adapters(section, m.name);
    if (!adapters) return unexpected(adapters.error());
    m.adapters = std::move(*adapters);
    auto size = estimate(section, path, m.adapters);
    if (!size) return unexpected(size.error());
    m.context_size = size->second;
    m.definition = definition(*shared, section, path, m.adapters);
    m.estimated_bytes = size->first;
    m.load = [shared, i, &registry]() -> Expected<LoadedEngine> {
      const PipelineSection& model = shared->sections[i];
      auto engine = build_model_engine(*shared, model, registry);
      if (!engine) return unexpected(engine.error());
      std::shared_ptr<Engine> owner = std::move(*engine);
      LoadedEngine loaded;
      loaded.engine = to_c(*owner);
      loaded.memory_bytes = file_bytes(std::get<std::string>(model.core_options.values.at("path"))) +
                            owner->adapter_bytes() + owner->kv_cache_bytes();
      loaded.owner = std::move(owner);
      return loaded;
    };
    out.push_back(std::move(m));
  }
  return out;
}

PoolSettings pool_settings(const Pipeline& pipeline) {
  PoolSettings settings;
  const std::int64_t keep_alive = int_value(pipeline.engine, "keep_alive_s", 300);
  settings.keep_alive = std::chrono::milliseconds(keep_alive < 0 ? -1 : keep_alive * 1000);
  const std::int64_t budget_mb = int_value(pipeline.engine, "memory_budget_mb", 0);
  if (budget_mb > 0) {
    settings.budget_bytes = static_cast<std::uint64_t>(budget_mb) << 20;
  } else {
    const PipelineSection* backend = pipeline.find("backend");
    const std::string name = backend ? backend->plugin->description().name : "cpu";
    if (name == "cpu" || name == "cpu-scalar") settings.budget_bytes = mem_available_bytes();
  }
  return settings;
}

}  // namespace lpx::core
