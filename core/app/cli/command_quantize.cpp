// `lpx-pipeline quantize IN.gguf OUT.gguf --type TYPE`: the file llama-quantize writes for the
// same type name, with a progress bar on stderr (core/quantize/quantize_model.hpp).
#include <iostream>

#include "cli/commands.hpp"
#include "cli/conversion_run.hpp"
#include "cli/exit_codes.hpp"
#include "quantize/quantize_model.hpp"

namespace lpx::cli {
namespace {

struct QuantizeArguments {
  std::string input, output, type;
  bool pure = false;
  bool allow_requantize = false;
  unsigned threads = 0;
};

int quantize_command(const QuantizeArguments& a) {
  const auto mix = core::parse_quant_mix(a.type);
  if (!mix) {
    std::cerr << "error: --type " << a.type << ": unknown type; types: " << core::quant_mix_names() << "\n";
    return kExitUsageError;
  }
  core::QuantizeOptions options;
  options.mix = *mix;
  options.pure = a.pure;
  options.allow_requantize = a.allow_requantize;
  options.threads = a.threads;
  return run_conversion(a.output, std::string(core::quant_mix_name(*mix)),
                        [&](const std::atomic<bool>* stop, std::function<void(const core::QuantizeProgress&)> progress) {
                          options.stop = stop;
                          options.on_progress = std::move(progress);
                          return core::quantize_model(a.input, a.output, options);
                        });
}

}  // namespace

Command add_quantize_command(CLI::App& parent) {
  auto args = std::make_shared<QuantizeArguments>();
  CLI::App* app = parent.add_subcommand(
      "quantize", "Write a GGUF model with its tensors quantized, byte for byte as llama-quantize does");
  app->add_option("input", args->input, "Model to quantize (GGUF: F32, F16 or BF16 tensors)")->required();
  app->add_option("output", args->output, "File to write")->required();
  app->add_option("--type", args->type, core::quant_mix_names())->required();
  app->add_flag("--pure", args->pure, "Every quantizable tensor in the type itself: no mix, no Q6_K output");
  app->add_flag("--allow-requantize", args->allow_requantize,
                "Also convert tensors that are quantized already (loses quality)");
  app->add_option("--threads", args->threads, "Threads (0: every core)")->capture_default_str();
  return {app, [args] { return quantize_command(*args); }};
}

}  // namespace lpx::cli
