// `lpx-pipeline serve --model FILE …`: the server pipeline (pipelines/server.toml) written from
// flags, so serving a model needs no file. `--set` overrides it exactly as for `run`.
#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "cli/run_pipeline.hpp"
#include "cli/shorthand_pipeline.hpp"

namespace lpx::cli {

int serve_command(const ServeArguments& a) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) {
        toml::table transport{{"plugin", "http"}, {"host", a.host}, {"port", a.port}};
        if (!a.api_key.empty()) transport.insert("api_key", a.api_key);
        if (!a.api_key_file.empty()) transport.insert("api_key_file", a.api_key_file);
        const ShorthandModel model{a.model_paths.front(), a.device,     a.backend,
                                   a.context_size,        a.max_sequences, "latency",
                                   a.speculative,
                                   {a.model_paths.begin() + 1, a.model_paths.end()},
                                   a.quantize,
                                   a.loras,
                                   a.adapters};
        return load_shorthand_pipeline("serve", model, std::move(transport), a.overrides, registry);
      },
      false);
}

Command add_serve_command(CLI::App& parent) {
  auto serve = std::make_shared<ServeArguments>();
  CLI::App* serve_app =
      parent.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  serve_app
      ->add_option("--model", serve->model_paths,
                   "Model file (GGUF); repeat to serve several, routed by each request's model "
                   "(the file's stem); the first is the default and stays loaded")
      ->required()
      ->allow_extra_args(false);
  serve_app->add_option("--host", serve->host, "Address to bind")->capture_default_str();
  serve_app->add_option("--port", serve->port, "TCP port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  auto* key_option = serve_app->add_option("--api-key", serve->api_key,
                                            "Bearer key every API request must carry");
  auto* key_file_option = serve_app->add_option("--api-key-file", serve->api_key_file,
                                                "File with one API key per line");
  key_option->excludes(key_file_option);
  add_engine_flags(*serve_app, *serve);
  serve_app->add_option("--set", serve->overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  return {serve_app, [serve] {
    return serve_command(*serve);
  }};
}

}  // namespace lpx::cli
