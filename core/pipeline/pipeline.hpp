// A validated pipeline: the plugins it names, loaded and checked, with their resolved options.
//
// A pipeline file has a [pipeline] table (name, description) and one table per slot:
//   [model]     a model_format plugin       [backend]   a quant_backend plugin
//   [sampler]   a sampler plugin, or a chain of them as [[sampler]] tables applied in order;
//               the last one chooses the token (greedy, dist), the others only filter
//   [transport] a transport plugin (required)
// Each slot table names its plugin with `plugin = "NAME"`; a slot may have keys of its own that
// the core reads ([model].path); every other key is an option of that plugin. Validation checks everything and reports every problem before any instance is created.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipeline/diagnostics.hpp"
#include "pipeline/resolved_options.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct PipelineSlot {
  const char* name;
  lpx_plugin_kind kind;
  bool required;
  std::vector<OptionSpec> core_options;  // keys of the slot that the core reads, not the plugin
  bool chain = false;  // may be an array of tables ([[sampler]]): plugins applied in order
};

// The keys of [engine], a table the core reads itself (no plugin): engine-wide settings.
const std::vector<OptionSpec>& engine_table_specs();
// The keys of [speculative], another core table: speculative decoding.
const std::vector<OptionSpec>& speculative_table_specs();

// The slots in the order their plugins are created (and the reverse of destruction).
const std::vector<PipelineSlot>& pipeline_slots();

struct PipelineSection {
  std::string slot;
  std::shared_ptr<PluginLibrary> plugin;
  ResolvedOptions options;       // the plugin's
  ResolvedOptions core_options;  // the slot's own keys (e.g. [model].path)
  SourceLocation where;          // the `plugin = "..."` line
};

struct Pipeline {
  std::string path;
  std::string name;
  std::string description;
  std::vector<PipelineSection> sections;  // in pipeline_slots() order, absent slots skipped
  ResolvedOptions engine;                 // [engine]: the core's engine settings (engine_table_specs)
  ResolvedOptions speculative;            // [speculative]: speculative decoding (speculative_table_specs)

  const PipelineSection* find(const std::string& slot) const;
};

// Reads, overrides and validates `path`. On failure returns every problem found.
Expected<Pipeline, Diagnostics> load_pipeline(const std::string& path,
                                              const std::vector<std::string>& overrides,
                                              PluginRegistry& registry);
// The same for a pipeline written in memory (CLI shorthands such as `serve`); `path` names it.
Expected<Pipeline, Diagnostics> load_pipeline_text(const std::string& path, const std::string& text,
                                                   const std::vector<std::string>& overrides,
                                                   PluginRegistry& registry);

}  // namespace lpx::core
