// Pipelines that CLI shorthands (`serve`, `batch`) write from their flags: a [model] with the
// engine's sizes, the [backend] --device selects, greedy sampling, and the caller's [transport].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "cli/engine_flags.hpp"
#include "pipeline/pipeline.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

struct ShorthandModel {
  std::string model_path;
  std::string device;   // cpu, cuda, cuda:N, auto
  std::string backend;  // a plugin name; wins over device
  std::uint32_t context_size = 4096;
  std::uint32_t max_sequences = 4;
  std::string mode = "latency";  // [model] mode
  SpeculativeFlags speculative;   // [speculative] mode and draft_model
  // Served beside model_path with the same settings (serve --model A --model B): the pipeline
  // then lists them all as [[models]], model_path first.
  std::vector<std::string> more_models;
  std::string quantize;  // [model] quantize; empty: none
  std::vector<std::string> loras;  // [model] lora
  std::vector<std::string> adapters;  // [model] adapters, of model_path only
};

// Validates the written pipeline (with `overrides`, as `run --set`); `name` names it in messages.
core::Expected<core::Pipeline, core::Diagnostics> load_shorthand_pipeline(
    const std::string& name, const ShorthandModel& model, toml::table transport,
    const std::vector<std::string>& overrides, core::PluginRegistry& registry);

}  // namespace lpx::cli
