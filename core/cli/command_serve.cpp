// `lpx-pipeline serve --model FILE …`: the server pipeline (pipelines/server.toml) written from
// flags, so serving a model needs no file. `--set` overrides it exactly as for `run`.
#include <sstream>

#include <toml++/toml.h>

#include "cli/commands.hpp"
#include "cli/device_choice.hpp"
#include "cli/run_pipeline.hpp"

namespace lpx::cli {
namespace {

// The CPU backends run with float activations, as pipelines/chat.toml does (see there: closer to
// the model's own arithmetic; --set backend.activations=q8 for llama.cpp's bits and speed).
toml::table backend_table(const std::string& plugin) {
  toml::table table{{"plugin", plugin}};
  if (plugin == "cpu" || plugin == "cpu-scalar") table.insert("activations", "f32");
  return table;
}

}  // namespace

int serve_command(const ServeArguments& a) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) -> core::Expected<core::Pipeline, core::Diagnostics> {
        auto backend = backend_for_device(a.device, a.backend, registry);
        if (!backend) {
          core::Diagnostics diagnostics;
          diagnostics.error({"--device " + a.device, 0, 0}, backend.error());
          return core::unexpected(std::move(diagnostics));
        }
        // Room in the KV cache for every sequence at full context.
        const auto kv_tokens = static_cast<std::int64_t>(a.context_size) * a.max_sequences;
        toml::table transport{{"plugin", "http"}, {"host", a.host}, {"port", a.port}};
        if (!a.api_key.empty()) transport.insert("api_key", a.api_key);
        if (!a.api_key_file.empty()) transport.insert("api_key_file", a.api_key_file);
        const toml::table document{
            {"pipeline", toml::table{{"name", "serve"},
                                     {"description", "lpx-pipeline serve --model " + a.model_path}}},
            {"model", toml::table{{"plugin", "gguf"},
                                  {"path", a.model_path},
                                  {"context_size", static_cast<std::int64_t>(a.context_size)},
                                  {"max_sequences", static_cast<std::int64_t>(a.max_sequences)},
                                  {"kv_cache_tokens", kv_tokens}}},
            {"backend", backend_table(*backend)},
            {"sampler", toml::table{{"plugin", "greedy"}}},
            {"transport", std::move(transport)}};
        std::ostringstream text;
        text << document;
        return core::load_pipeline_text("lpx-pipeline serve", text.str(), a.overrides, registry);
      },
      false);
}

}  // namespace lpx::cli
