// `lpx-pipeline generate`: one completion of a prompt, streamed to stdout (or, with --ids, the
// generated token ids as one JSON array). The engine is the same one pipelines run.
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/commands.hpp"
#include "cli/engine_flags.hpp"
#include "engine/device_choice.hpp"
#include "cli/exit_codes.hpp"
#include "cli/signal_watcher.hpp"
#include "engine/engine_builder.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/read_file.hpp"

namespace lpx::cli {
namespace {

struct Output {
  bool ids = false;
  std::vector<std::int32_t> tokens;
  lpx_request_result result{};
  std::string error;
};

}  // namespace

int generate_command(const GenerateArguments& arguments) {
  std::string prompt = arguments.prompt;
  if (!arguments.prompt_file.empty()) {
    auto text = core::read_whole_file(arguments.prompt_file);
    if (!text) {
      std::cerr << "error: " << text.error() << "\n";
      return kExitRuntimeError;
    }
    prompt = std::move(*text);
  }
  // A grammar or JSON Schema the answer is held to (docs/structured-output.md).
  std::string grammar;
  std::int32_t grammar_kind = 0;
  for (const auto& [path, kind] : {std::pair{&arguments.grammar_file, LPX_GRAMMAR_GBNF},
                                   std::pair{&arguments.json_schema_file, LPX_GRAMMAR_JSON_SCHEMA}}) {
    if (path->empty()) continue;
    auto text = core::read_whole_file(*path);
    if (!text) {
      std::cerr << "error: " << text.error() << "\n";
      return kExitRuntimeError;
    }
    grammar = std::move(*text);
    grammar_kind = kind;
  }
  auto speculative = arguments.speculative.resolved_mode();
  if (!speculative) {
    std::cerr << "error: " << speculative.error() << "\n";
    return kExitUsageError;
  }
  SignalWatcher signals;
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);

  auto backend_name = core::backend_for_device(arguments.device, arguments.backend, registry);
  if (!backend_name) {
    std::cerr << "error: " << backend_name.error() << "\n";
    return kExitRuntimeError;
  }
  core::EngineInputs inputs;
  auto file = core::ModelFile::open(arguments.model_path, registry);
  if (!file) {
    std::cerr << "error: " << file.error() << "\n";
    return kExitRuntimeError;
  }
  inputs.file = std::move(*file);
  if (!arguments.quantize.empty()) inputs.quantize = core::parse_quant_mix(arguments.quantize);
  for (const std::string& text : arguments.loras) {
    auto spec = core::parse_lora_spec(text);
    if (!spec) {
      std::cerr << "error: --lora: " << spec.error() << "\n";
      return kExitUsageError;
    }
    inputs.loras.push_back(*spec);
  }
  auto backend = core::default_instance(registry, backend_name->plugin, backend_name->options);
  if (!backend) {
    std::cerr << "error: backend '" << backend_name->plugin << "': " << backend.error() << "\n";
    return kExitRuntimeError;
  }
  inputs.backend = backend->instance;
  // llama.cpp's default chain, so `generate` behaves as its users expect; T = 0 is greedy.
  const char* chain_greedy[] = {"greedy"};
  const char* chain_sampled[] = {"top-k", "top-p", "min-p", "temperature", "dist"};
  const bool greedy = arguments.temperature <= 0.0;
  for (const char* name : greedy ? std::span<const char*>(chain_greedy)
                                 : std::span<const char*>(chain_sampled)) {
    auto link = core::default_instance(registry, name);
    if (!link) {
      std::cerr << "error: sampler '" << name << "': " << link.error() << "\n";
      return kExitRuntimeError;
    }
    inputs.sampler_chain.push_back(std::move(*link));
  }
  inputs.config.max_sequences = 1;
  inputs.config.context_size = arguments.context_size;
  if (*speculative != "off") inputs.config.max_draft = core::kDefaultMaxDraft;
  if (*speculative == "draft") {
    auto draft = core::ModelFile::open(arguments.speculative.draft_model, registry);
    if (!draft) {
      std::cerr << "error: --draft-model: " << draft.error() << "\n";
      return kExitRuntimeError;
    }
    inputs.draft_file = std::move(*draft);
  }
  auto engine = core::build_engine(std::move(inputs), registry);
  if (!engine) {
    std::cerr << "error: " << engine.error() << "\n";
    return kExitRuntimeError;
  }

  lpx_sampling_overrides sampling{};
  sampling.struct_size = sizeof(sampling);
  if (!greedy) {
    sampling.set |= LPX_SET_TEMPERATURE;
    sampling.temperature = arguments.temperature;
  }
  if (arguments.seed) {
    sampling.set |= LPX_SET_SEED;
    sampling.seed = *arguments.seed;
  }
  if (grammar_kind != 0) {
    sampling.set |= LPX_SET_GRAMMAR;
    sampling.grammar = grammar.c_str();
    sampling.grammar_kind = grammar_kind;
  }
  Output output;
  output.ids = arguments.ids;
  lpx_request request{};
  request.struct_size = sizeof(request);
  request.prompt = prompt.c_str();
  request.max_tokens = arguments.max_tokens;
  request.sampling = &sampling;
  request.flags = LPX_REQUEST_PARSE_SPECIAL;  // as llama.cpp reads a prompt
  request.user = &output;
  request.on_token = [](void* user, const lpx_token_event* event) -> std::int32_t {
    auto& out = *static_cast<Output*>(user);
    if (out.ids) {
      if (event->token >= 0) out.tokens.push_back(event->token);
    } else if (event->text_length != 0) {
      std::cout.write(event->text, static_cast<std::streamsize>(event->text_length));
      std::cout.flush();
    }
    return 0;
  };
  request.on_done = [](void* user, const lpx_request_result* result) {
    auto& out = *static_cast<Output*>(user);
    out.result = *result;
    if (result->error != nullptr) out.error = result->error->message;
  };
  auto id = (*engine)->submit(request);
  if (!id) {
    std::cerr << "error: " << id.error().message << "\n";
    return kExitRuntimeError;
  }
  core::Engine* running = engine->get();
  const std::uint64_t request_id = *id;
  signals.start([running, request_id] { running->cancel(request_id); });
  (*engine)->wait(*id);
  signals.stop();

  if (output.ids) {
    std::string json = "[";
    for (std::size_t i = 0; i < output.tokens.size(); ++i) {
      json += (i ? ", " : "") + std::to_string(output.tokens[i]);
    }
    std::cout << json << "]\n";
  } else {
    std::cout << "\n";
  }
  const lpx_request_result& r = output.result;
  spdlog::info("prompt {} tokens, generated {} tokens; time to first token {:.1f} ms, "
               "{:.1f} tokens/s", r.prompt_tokens, r.completion_tokens, r.time_to_first_token_ms,
               r.decode_tokens_per_second);
  if (r.finish_reason == LPX_FINISH_ERROR) {
    std::cerr << "error: " << output.error << "\n";
    return kExitRuntimeError;
  }
  if (r.finish_reason == LPX_FINISH_CANCELLED) return kExitRuntimeError;
  return kExitOk;
}

Command add_generate_command(CLI::App& parent) {
  auto generate = std::make_shared<GenerateArguments>();
  CLI::App* generate_app = parent.add_subcommand("generate", "Complete one prompt and print it");
  generate_app->add_option("--model", generate->model_path, "Model: a GGUF file or a Hugging Face directory")->required();
  auto* prompt_option = generate_app->add_option("--prompt", generate->prompt, "Prompt text");
  auto* prompt_file_option =
      generate_app->add_option("--prompt-file", generate->prompt_file, "Read the prompt from a file");
  prompt_option->excludes(prompt_file_option);
  generate_app->add_option("--max-tokens", generate->max_tokens, "Most tokens to generate")
      ->check(CLI::Range(1u, 1u << 20))
      ->capture_default_str();
  generate_app->add_option("--temperature", generate->temperature, "0 = greedy")
      ->check(CLI::Range(0.0, 100.0))
      ->capture_default_str();
  generate_app->add_option("--seed", generate->seed, "Random seed (same seed, same output)");
  generate_app->add_option("--device", generate->device, "cpu, cuda, cuda:N or auto")
      ->check(core::check_device)
      ->capture_default_str();
  generate_app->add_option("--backend", generate->backend,
                           "Backend plugin by name (e.g. cpu-scalar); overrides --device");
  add_speculative_flags(*generate_app, generate->speculative);
  add_quantize_flag(*generate_app, generate->quantize);
  add_lora_flag(*generate_app, generate->loras);
  generate_app->add_option("--context", generate->context_size,
                           "Positions for prompt + answer (0 = the model's, at most 8192)");
  generate_app->add_flag("--ids", generate->ids, "Print the generated token ids as a JSON array");
  auto* grammar_option = generate_app->add_option(
      "--grammar-file", generate->grammar_file, "Hold the answer to this GBNF grammar (root rule: root)");
  auto* schema_option = generate_app->add_option(
      "--json-schema-file", generate->json_schema_file, "Hold the answer to this JSON Schema");
  grammar_option->excludes(schema_option);
  return {generate_app, [generate, prompt_option, prompt_file_option] {
    if (prompt_option->count() == 0 && prompt_file_option->count() == 0) {
      std::cerr << "error: generate needs --prompt STR or --prompt-file PATH\n";
      return kExitUsageError;
    }
    return generate_command(*generate);
  }};
}

}  // namespace lpx::cli
