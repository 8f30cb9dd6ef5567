// lpx-pipeline: the command-line entry point of LPX.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "logging/logging.hpp"

int main(int argc, char** argv) {
  using namespace lpx;
  CLI::App app{"LPX: fast local inference for small language models", "lpx-pipeline"};
  app.set_version_flag("--version", [] { return cli::version_text(); });
  app.require_subcommand(1);

  core::LogConfig log;
  std::string log_format = "text";
  app.add_option("--log-level", log.level, "trace, debug, info, warn, error or off")
      ->capture_default_str();
  app.add_option("--log-file", log.file, "Write logs to this file instead of stderr");
  app.add_option("--log-format", log_format, "Log line format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();

  // Each command registers its own subcommand and options (cli/command_*.cpp).
  const cli::Command commands[] = {
      cli::add_run_command(app),     cli::add_generate_command(app),
      cli::add_serve_command(app),   cli::add_batch_command(app),
      cli::add_batch_merge_command(app), cli::add_bench_command(app),
      cli::add_synth_command(app),   cli::add_plugins_command(app),
      cli::add_inspect_command(app), cli::add_tokenize_command(app),
      cli::add_doctor_command(app),  cli::add_perplexity_command(app),
      cli::add_quantize_command(app),
      cli::add_convert_command(app),
      cli::add_quality_command(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsageError;
  }

  log.format = log_format == "json" ? core::LogFormat::json : core::LogFormat::text;
  if (auto configured = core::configure_logging(log); !configured) {
    std::cerr << "error: " << configured.error() << "\n";
    return cli::kExitUsageError;
  }
  for (const cli::Command& command : commands) {
    if (*command.app) return command.run();
  }
  return cli::kExitUsageError;
}
