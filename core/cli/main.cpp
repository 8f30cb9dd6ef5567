// lpx-pipeline: the command-line entry point of LPX.
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "engine/device_choice.hpp"
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

  cli::RunArguments run;
  CLI::App* run_app = app.add_subcommand("run", "Run a pipeline file");
  run_app->add_option("pipeline", run.pipeline_path, "Pipeline file (TOML)")->required();
  run_app->add_option("--set", run.overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);
  run_app->add_flag("--stats", run.show_stats,
                    "After each answer, print time to first token, tokens/s and tokens used");

  cli::GenerateArguments generate;
  CLI::App* generate_app = app.add_subcommand("generate", "Complete one prompt and print it");
  generate_app->add_option("--model", generate.model_path, "Model file (GGUF)")->required();
  auto* prompt_option = generate_app->add_option("--prompt", generate.prompt, "Prompt text");
  auto* prompt_file_option =
      generate_app->add_option("--prompt-file", generate.prompt_file, "Read the prompt from a file");
  prompt_option->excludes(prompt_file_option);
  generate_app->add_option("--max-tokens", generate.max_tokens, "Most tokens to generate")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  generate_app->add_option("--temperature", generate.temperature, "0 = greedy")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  generate_app->add_option("--seed", generate.seed, "Random seed (same seed, same output)");
  generate_app->add_option("--device", generate.device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  generate_app->add_option("--backend", generate.backend,
                           "Backend plugin by name (e.g. cpu-scalar); overrides --device");
  generate_app->add_option("--context", generate.context_size,
                           "Positions for prompt + answer (0 = the model's, at most 8192)");
  generate_app->add_flag("--ids", generate.ids, "Print the generated token ids as a JSON array");

  cli::ServeArguments serve;
  CLI::App* serve_app =
      app.add_subcommand("serve", "Serve a model over an OpenAI-compatible HTTP API");
  serve_app->add_option("--model", serve.model_path, "Model file (GGUF)")->required();
  serve_app->add_option("--host", serve.host, "Address to bind")->capture_default_str();
  serve_app->add_option("--port", serve.port, "TCP port (0 = any free port)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  auto* key_option = serve_app->add_option("--api-key", serve.api_key,
                                            "Bearer key every API request must carry");
  auto* key_file_option = serve_app->add_option("--api-key-file", serve.api_key_file,
                                                "File with one API key per line");
  key_option->excludes(key_file_option);
  serve_app->add_option("--device", serve.device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  serve_app->add_option("--backend", serve.backend, "Backend plugin by name; overrides --device");
  serve_app->add_option("--context", serve.context_size, "Positions per sequence")
      ->check(CLI::Range(16u, 1u << 20))
      ->capture_default_str();
  serve_app->add_option("--max-sequences", serve.max_sequences, "Sequences decoded together")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  serve_app->add_option("--set", serve.overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);

  cli::BatchArguments batch;
  CLI::App* batch_app =
      app.add_subcommand("batch", "Run every prompt of a JSONL file; resumable, exactly once");
  batch_app->add_option("--model", batch.model_path, "Model file (GGUF)")->required();
  batch_app->add_option("--input", batch.input, "JSONL input: one request per line")->required();
  batch_app->add_option("--run-dir", batch.run_dir,
                        "Output directory (default outputs/<time>-<input hash>/)");
  batch_app->add_flag("--resume", batch.resume, "Finish the run in --run-dir");
  batch_app->add_option("--shard", batch.shard, "I/N: this machine's share of the input (0-based)");
  batch_app->add_option("--device", batch.device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  batch_app->add_option("--backend", batch.backend, "Backend plugin by name; overrides --device");
  batch_app->add_option("--context", batch.context_size, "Positions per sequence")
      ->check(CLI::Range(16u, 1u << 20))
      ->capture_default_str();
  batch_app->add_option("--max-sequences", batch.max_sequences, "Sequences decoded together")
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  batch_app->add_option("--max-tokens", batch.max_tokens,
                        "max_tokens of lines that set none (0 = until the model stops)")
      ->capture_default_str();
  batch_app->add_option("--set", batch.overrides, "Override a pipeline value: KEY.PATH=VALUE")
      ->allow_extra_args(false);

  cli::BatchMergeArguments merge;
  CLI::App* merge_app = app.add_subcommand(
      "batch-merge", "Combine the run directories of a sharded batch job; list missing ids");
  merge_app->add_option("run_dirs", merge.run_dirs, "Run directories (one per shard)")->required();
  merge_app->add_option("--output", merge.output,
                        "Merged run directory (default outputs/merged-<time>-<input hash>/)");

  cli::BenchArguments bench;
  CLI::App* bench_app = app.add_subcommand(
      "bench", "Prompt and decode speed, latency, memory and roofline share of a model");
  bench_app->add_option("--model", bench.model, "Model file, or synth:NAME:TYPE (see synth)")->required();
  bench_app->add_option("--device", bench.device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  bench_app->add_option("--backend", bench.backend, "Backend plugin by name; overrides --device");
  bench_app->add_option("-p,--prompt", bench.prompt_lengths, "Prompt lengths (ppN tests), e.g. 128,512")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("-n,--generate", bench.generate_lengths, "Generated lengths (tgN tests)")
      ->delimiter(',')
      ->capture_default_str();
  bench_app->add_option("--batch", bench.batches, "Concurrent sequences of the tg tests, e.g. 1,8,32")
      ->delimiter(',')
      ->check(CLI::Range(1u, 1024u))
      ->capture_default_str();
  bench_app->add_option("-d,--depth", bench.depths,
                        "Tokens already in each sequence's context when a tg test starts "
                        "(tgN @ dD), e.g. 0,512,2048; pp tests ignore it")
      ->delimiter(',')
      ->check(CLI::Range(0u, 1u << 20))
      ->capture_default_str();
  bench_app->add_option("--threads", bench.threads, "Backend threads (0 = its default)");
  bench_app->add_option("--reps", bench.repetitions, "Repetitions of each test")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  bench_app->add_option("--option", bench.options, "Backend option KEY=VALUE (e.g. activations=f32)");
  bench_app->add_option("--sample", bench.sample,
                        "Sample instead of greedy, KEY=VALUE of temperature, top_k, top_p, min_p, "
                        "seed (e.g. temperature=0.8 top_p=0.95)");
  bench_app->add_flag("--json", bench.json, "One JSON array instead of the table");

  cli::SynthArguments synth;
  CLI::App* synth_app = app.add_subcommand(
      "synth", "Write a GGUF with a named model's shapes and random weights (for benchmarks)");
  synth_app->add_option("--like", synth.like,
                        "smollm2-135m, smollm2-360m, smollm2-1.7b, qwen2.5-0.5b, qwen2.5-1.5b, "
                        "llama-3.2-1b or llama-3.2-3b")
      ->required();
  synth_app->add_option("--type", synth.type, "F16, BF16, Q8_0, Q4_0, Q4_1 or Q4_K")->required();
  synth_app->add_option("-o,--output", synth.output, "GGUF file to write")->required();
  synth_app->add_option("--seed", synth.seed, "Seed of the random weights")->capture_default_str();

  cli::PluginsArguments plugins;
  CLI::App* plugins_app = app.add_subcommand("plugins", "List the plugins this host can load");
  plugins_app->add_flag("--options", plugins.show_options, "Show each plugin's options");
  plugins_app->add_flag("--json", plugins.json, "Machine-readable output");

  cli::InspectArguments inspect;
  CLI::App* inspect_app =
      app.add_subcommand("inspect", "Validate a model file completely and summarise it");
  inspect_app->add_option("model", inspect.model_path, "Model file (GGUF)")->required();

  cli::TokenizeArguments tokenize;
  CLI::App* tokenize_app =
      app.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  tokenize_app->add_option("--model", tokenize.model_path, "Model file")->required();
  auto* text_option = tokenize_app->add_option("--text", tokenize.text, "Text to tokenize");
  auto* file_option = tokenize_app->add_option("--file", tokenize.file, "File to tokenize");
  text_option->excludes(file_option);
  tokenize_app->add_flag("--no-bos", tokenize.no_bos, "Do not add BOS even if the model asks");
  tokenize_app->add_flag("--parse-special", tokenize.parse_special,
                         "Turn special-token text like <|im_start|> into those tokens");

  cli::DoctorArguments doctor;
  CLI::App* doctor_app = app.add_subcommand(
      "doctor", "Check the NVIDIA driver and GPUs: can this binary use them, and if not, why");
  doctor_app->add_flag("--require-gpu", doctor.require_gpu, "Exit 1 when no GPU is usable");
  doctor_app->add_flag("--json", doctor.json, "One JSON object instead of the report");

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
  if (*run_app) return cli::run_command(run);
  if (*generate_app) {
    if (prompt_option->count() == 0 && prompt_file_option->count() == 0) {
      std::cerr << "error: generate needs --prompt STR or --prompt-file PATH\n";
      return cli::kExitUsageError;
    }
    return cli::generate_command(generate);
  }
  if (*serve_app) return cli::serve_command(serve);
  if (*batch_app) return cli::batch_command(batch);
  if (*merge_app) return cli::batch_merge_command(merge);
  if (*synth_app) return cli::synth_command(synth);
  if (*bench_app) return cli::bench_command(bench);
  if (*plugins_app) return cli::plugins_command(plugins);
  if (*inspect_app) return cli::inspect_command(inspect);
  if (*doctor_app) return cli::doctor_command(doctor);
  if (*tokenize_app) {
    if (text_option->count() == 0 && file_option->count() == 0) {
      std::cerr << "error: tokenize needs --text STR or --file PATH\n";
      return cli::kExitUsageError;
    }
    return cli::tokenize_command(tokenize);
  }
  return cli::kExitUsageError;
}
