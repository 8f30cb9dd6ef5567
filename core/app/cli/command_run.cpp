#include <functional>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/build_info.hpp"
#include "cli/exit_codes.hpp"
#include "host/run_record.hpp"
#include "cli/pipeline_reloader.hpp"
#include "cli/run_pipeline.hpp"
#include "cli/signal_watcher.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/pipeline_runner.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace lpx::cli {

int run_command(const RunArguments& arguments) {
  return run_pipeline(
      [&](core::PluginRegistry& registry) {
        return core::load_pipeline(arguments.pipeline_path, arguments.overrides, registry);
      },
      arguments.show_stats);
}

int run_pipeline(const PipelineLoader& load, bool show_stats) {
  SignalWatcher signals;  // before any plugin can start a thread
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);

  auto pipeline = load(registry);
  if (!pipeline) {
    std::cerr << pipeline.error().to_string();
    return kExitUsageError;
  }
  spdlog::info("pipeline '{}' from {}", pipeline->name, pipeline->path);

  core::PipelineRunner runner(*pipeline, registry);
  runner.set_show_stats(show_stats);
  runner.set_host_info(build_info().version, build_info().git_commit);
  if (auto created = runner.create_instances(); !created) {
    std::cerr << "error: " << created.error() << "\n";
    return kExitRuntimeError;
  }
  // Hashing the models costs time: only for transports that keep the record.
  if (runner.transport_supports("transport:run-record")) {
    auto record = host::run_record_json(*pipeline, {build_info().version, build_info().git_commit, build_info().cuda});
    if (!record) {
      std::cerr << "error: " << record.error() << "\n";
      return kExitRuntimeError;
    }
    runner.set_run_record(std::move(*record));
  }
  // SIGHUP: read the pipeline again (the file, or the shorthand's flags) and serve its models.
  PipelineReloader reloader([&] {
    auto next = load(registry);
    if (!next) {
      spdlog::error("reload refused, still serving the running pipeline:\n{}", next.error().to_string());
      return;
    }
    if (auto reloaded = runner.reload(*next); !reloaded) {
      spdlog::error("reload refused, still serving the running pipeline: {}", reloaded.error().message);
      return;
    }
    spdlog::info("reloaded pipeline '{}' from {}", next->name, next->path);
  });
  // Only a server reloads (a transport that routes by model); elsewhere SIGHUP stops the run.
  std::function<void()> on_reload;
  if (runner.transport_supports("transport:models")) on_reload = [&reloader] { reloader.request(); };
  signals.start([&runner] { runner.request_stop(); }, std::move(on_reload));
  auto ran = runner.run();
  signals.stop();  // the watcher may be inside the transport's request_stop: let it return first
  if (!ran) {
    std::cerr << "error: " << ran.error() << "\n";
    return kExitRuntimeError;
  }
  return kExitOk;
}

Command add_run_command(CLI::App& parent) {
  auto run = std::make_shared<RunArguments>();
  CLI::App* run_app = parent.add_subcommand("run", "Run a pipeline file");
  run_app->add_option("pipeline", run->pipeline_path, "Pipeline file (TOML)")->required();
  run_app->add_option("--set", run->overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  run_app->add_flag("--stats", run->show_stats,
                    "After each answer, print time to first token, tokens/s and tokens used");
  return {run_app, [run] {
    return run_command(*run);
  }};
}

}  // namespace lpx::cli
