// `lpx-pipeline serve --model FILE …`: the server pipeline (pipelines/server.toml) written from
// flags, so serving a model needs no file. `--set` overrides it exactly as for `run`.
#include "cli/commands.hpp"
#include "cli/run_pipeline.hpp"
#include "cli/shorthand_pipeline.hpp"

namespace lpx::cli {

int serve_command(const ServeArguments& a) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) {
        toml::table transport{{"plugin", "http"}, {"host", a.host}, {"port", a.port}};
        if (!a.api_key.empty()) transport.insert("api_key", a.api_key);
        if (!a.api_key_file.empty()) transport.insert("api_key_file", a.api_key_file);
        const ShorthandModel model{a.model_path, a.device, a.backend, a.context_size, a.max_sequences, "latency"};
        return load_shorthand_pipeline("serve", model, std::move(transport), a.overrides, registry);
      },
      false);
}

}  // namespace lpx::cli
