// `lpx-pipeline convert MODEL -o OUT.gguf [--type TYPE]`: a model LPX opens (a Hugging Face
// directory, a GGUF file) written as one GGUF file, its tensors as they are or quantized
// (core/quantize/convert_model.hpp), with a progress bar on stderr.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/conversion_run.hpp"
#include "cli/exit_codes.hpp"
#include "cli/loaded_model.hpp"
#include "quantize/convert_model.hpp"

namespace lpx::cli {
namespace {

struct ConvertArguments {
  std::string input, output, type;
  bool pure = false;
  bool allow_requantize = false;
  unsigned threads = 0;
};

int convert_command(const ConvertArguments& a) {
  core::ConvertOptions options;
  if (!a.type.empty()) {
    options.mix = core::parse_quant_mix(a.type);
    if (!options.mix) {
      std::cerr << "error: --type " << a.type << ": unknown type; types: " << core::quant_mix_names() << "\n";
      return kExitUsageError;
    }
  } else if (a.pure) {
    std::cerr << "error: --pure needs --type\n";
    return kExitUsageError;
  }
  auto model = LoadedModel::open_for_inspection(a.input);
  if (!model) {
    std::cerr << "error: " << model.error() << "\n";
    return kExitRuntimeError;
  }
  const core::ModelFile& file = model.value()->file();
  if (options.mix && !a.allow_requantize) {
    for (const lpx_tensor_view& t : file.tensors()) {
      if (t.type != LPX_TENSOR_F32 && t.type != LPX_TENSOR_F16 && t.type != LPX_TENSOR_BF16) {
        std::cerr << "error: " << a.input << ": tensor '" << t.name << "' is quantized already; converting it to "
                  << a.type << " requantizes, which loses quality: convert the F16/BF16/F32 model, or pass "
                  << "--allow-requantize\n";
        return kExitRuntimeError;
      }
    }
  }
  options.pure = a.pure;
  options.threads = a.threads;
  const std::string what = "from " + file.format_name() + " (" +
                           (options.mix ? std::string(core::quant_mix_name(*options.mix)) : "types kept") + ")";
  return run_conversion(a.output, what,
                        [&](const std::atomic<bool>* stop, std::function<void(const core::QuantizeProgress&)> progress) {
                          options.stop = stop;
                          options.on_progress = std::move(progress);
                          return core::convert_model(file, a.output, options);
                        });
}

}  // namespace

Command add_convert_command(CLI::App& parent) {
  auto args = std::make_shared<ConvertArguments>();
  CLI::App* app = parent.add_subcommand(
      "convert", "Write a model (a Hugging Face directory, a GGUF file) as one GGUF file, optionally quantized");
  app->add_option("model", args->input, "Model: a Hugging Face directory or a GGUF file")->required();
  app->add_option("-o,--output", args->output, "GGUF file to write")->required();
  app->add_option("--type", args->type, "Quantize while converting: " + core::quant_mix_names() +
                                            " (default: every tensor keeps its type)");
  app->add_flag("--pure", args->pure, "With --type: every quantizable tensor in the type itself");
  app->add_flag("--allow-requantize", args->allow_requantize,
                "With --type: also convert tensors that are quantized already (loses quality)");
  app->add_option("--threads", args->threads, "Threads (0: every core)")->capture_default_str();
  return {app, [args] { return convert_command(*args); }};
}

}  // namespace lpx::cli
