// `lpx-pipeline synth --like NAME --type TYPE -o FILE.gguf`: a model with the architecture and
// shapes of a named real model and random weights, for benchmarks of sizes we cannot download.
// The file is then checked exactly as `inspect` checks any model.
#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "synth/model_shapes.hpp"
#include "synth/synthetic_model.hpp"

namespace lpx::cli {

int synth_command(const SynthArguments& a) {
  const core::synth::ModelShape* known = core::synth::find_model_shape(a.like);
  if (known == nullptr) {
    std::cerr << "error: --like '" << a.like << "' is not a known model (known: "
              << core::synth::model_shape_names() << ")\n";
    return kExitUsageError;
  }
  const auto type = core::synth::synth_type(a.type);
  if (!type) {
    std::cerr << "error: --type '" << a.type << "' is not one synth writes ("
              << core::synth::synth_type_names() << ")\n";
    return kExitUsageError;
  }
  core::synth::ModelShape shape = *known;
  if (a.layers != 0) shape.n_layer = a.layers;  // a cheaper model of the same layer shape
  auto written = core::synth::write_synthetic_model(shape, *type, a.seed, a.output);
  if (!written) {
    std::cerr << "error: " << written.error() << "\n";
    return kExitRuntimeError;
  }
  std::cout << "wrote " << a.output << ": synthetic " << shape.name << " (" << shape.architecture
            << ", " << shape.n_layer << " layers, "
            << written->parameters / 1'000'000 << "M parameters), " << a.type << ", "
            << written->bytes / (1 << 20) << " MiB\n";
  if (!written->notes.empty()) std::cout << "note: " << written->notes << "\n";
  return inspect_command(InspectArguments{a.output});
}

Command add_synth_command(CLI::App& parent) {
  auto synth = std::make_shared<SynthArguments>();
  CLI::App* synth_app = parent.add_subcommand(
      "synth", "Write a GGUF with a named model's shapes and random weights (for benchmarks)");
  synth_app->add_option("--like", synth->like, core::synth::model_shape_names())->required();
  synth_app->add_option("--type", synth->type, "F16, BF16, Q8_0, Q4_0, Q4_1, Q4_K or Q4_K_M (llama-quantize's mix)")->required();
  synth_app->add_option("-o,--output", synth->output, "GGUF file to write")->required();
  synth_app->add_option("--seed", synth->seed, "Seed of the random weights")->capture_default_str();
  synth_app->add_option("--layers", synth->layers,
                        "Layers to write (default: the model's): a smaller model of the same shape")
      ->check(CLI::Range(1u, 1024u));
  return {synth_app, [synth] {
    return synth_command(*synth);
  }};
}

}  // namespace lpx::cli
