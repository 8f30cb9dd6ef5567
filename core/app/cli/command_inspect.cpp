#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "chat_template/chat_template.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/loaded_model.hpp"
#include "model/architecture.hpp"
#include "model/builtin_chat_templates.hpp"
#include "model/hyperparameters.hpp"
#include "model/model_validation.hpp"
#include "util/model_path.hpp"
#include "reference/tensor_types.hpp"

namespace lpx::cli {
namespace {

std::string mebibytes(std::uint64_t bytes) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << static_cast<double>(bytes) / (1024.0 * 1024.0)
      << " MiB";
  return out.str();
}

std::string type_name(std::int32_t type) {
  const auto* traits = kernels::reference::traits_of(type);
  return traits ? traits->name : "?";
}

std::string id_text(std::optional<std::int32_t> id) { return id ? std::to_string(*id) : "none"; }

// `tokenizer` is NULL when this build does not support the file's tokenizer; `cannot_run`
// says why the model cannot run here ("" when it can).
void print_summary(const core::ModelFile& file, const core::Hyperparameters& h,
                   const core::Tokenizer* tokenizer, const std::string& tokenizer_problem,
                   const std::string& cannot_run) {
  const std::uint64_t file_bytes = core::model_bytes(file.path());
  std::map<std::string, std::uint64_t> per_type;
  std::uint64_t tensor_bytes = 0;
  for (const lpx_tensor_view& t : file.tensors()) {
    ++per_type[type_name(t.type)];
    tensor_bytes += t.size_bytes;
  }
  std::cout << "model:          " << file.path() << "\n"
            << "format:         " << file.format_name() << " (" << mebibytes(file_bytes) << ")\n"
            << "architecture:   " << h.architecture;
  if (h.n_layer == 0) {  // an architecture whose hyperparameters this build does not read
    std::cout << " (hyperparameters not read: see below)\n";
  } else {
    std::cout << ": " << h.n_layer << " layers, embedding " << h.n_embd << ", feed-forward "
              << h.n_ff << ", heads " << h.n_head << " (kv " << h.n_head_kv << "), head dim "
              << h.head_dim << "\n"
              << "context:        " << h.n_ctx_train << " tokens trained, rope base "
              << h.rope_freq_base << " over " << h.n_rot << " dims, rms eps " << h.rms_norm_eps
              << "\n";
  }
  if (h.n_params != 0) {
    std::cout << "parameters:     " << std::fixed << std::setprecision(1)
              << static_cast<double>(h.n_params) / 1e6 << " M, output head "
              << (h.tied_output ? "tied to the embedding" : "separate") << "\n";
  }
  std::cout << "tensors:        " << file.tensors().size() << " (";
  bool first = true;
  for (const auto& [name, count] : per_type) {
    std::cout << (first ? "" : ", ") << name << " " << count;
    first = false;
  }
  std::cout << "), " << mebibytes(tensor_bytes) << "\n";

  std::cout << "tokenizer:      ";
  if (auto model = file.get_string("tokenizer.ggml.model")) std::cout << *model;
  if (auto pre = file.get_string("tokenizer.ggml.pre")) std::cout << ", pre '" << *pre << "'";
  if (tokenizer != nullptr) {
    std::cout << ", " << tokenizer->vocab_size() << " tokens, bos " << id_text(tokenizer->bos())
              << ", eos " << id_text(tokenizer->eos()) << ", eot " << id_text(tokenizer->eot());
  } else {
    std::cout << " (NOT supported: " << tokenizer_problem << ")";
  }
  std::cout << "\n";
  std::cout << "chat template:  ";
  if (auto text = file.get_string("tokenizer.chat_template")) {
    auto parsed = core::ChatTemplate::parse(*text);
    std::cout << "present, " << text->size() << " bytes"
              << (parsed ? std::string(", supported") : ", NOT supported: " + parsed.error().message);
  } else if (auto builtin = core::builtin_chat_template(h.architecture)) {
    std::cout << "none in the file; chat uses " << builtin->origin;
  } else {
    std::cout << "none (chat needs a template file: [model] chat_template = \"FILE\")";
  }
  std::cout << "\n";
  std::cout << "runs here:      "
            << (cannot_run.empty() ? std::string("yes (lpx-pipeline generate --model FILE)")
                                   : "no: " + cannot_run)
            << "\n";
}

// What `h` can say about a file whose architecture this build does not know: its generic
// dimensions, when they are there.
core::Hyperparameters generic_hyperparameters(const core::ModelFile& file) {
  if (auto h = core::read_hyperparameters(file)) return *h;
  core::Hyperparameters h;
  if (auto architecture = file.get_string("general.architecture")) h.architecture = *architecture;
  return h;
}

}  // namespace

// A well-formed file is summarised even when this build cannot run it (its architecture or
// tokenizer is unsupported: exit 0, and a line says why); a malformed one is an error (exit 1).
int inspect_command(const InspectArguments& arguments) {
  auto model = LoadedModel::open_for_inspection(arguments.model_path);
  if (!model) {
    std::cerr << "error: " << model.error() << "\n";
    return kExitRuntimeError;
  }
  const core::ModelFile& file = model.value()->file();
  std::string cannot_run;
  auto checked = core::validate_model(file);
  core::Hyperparameters h;
  if (checked) {
    h = *checked;
    // What the engine does next: the architecture's description (its own keys and tensors).
    const core::Architecture* architecture = core::find_architecture(h.architecture);
    const core::RunShape run{std::min<std::uint32_t>(h.n_ctx_train, 8192)};
    if (auto described = architecture->describe(file, h, run); !described) {
      if (described.error().code != LPX_ERR_UNSUPPORTED) {
        std::cerr << "error: " << described.error() << "\n";  // starts with the path
        return kExitRuntimeError;
      }
      cannot_run = described.error().message;
    }
  } else if (checked.error().code == LPX_ERR_UNSUPPORTED) {
    cannot_run = checked.error().message;
    h = generic_hyperparameters(file);
  } else {
    std::cerr << "error: " << arguments.model_path << ": " << checked.error() << "\n";
    return kExitRuntimeError;
  }
  const bool has_tokenizer = model.value()->has_tokenizer();
  const std::string tokenizer_problem = model.value()->tokenizer_problem().message;
  if (!has_tokenizer && cannot_run.empty()) cannot_run = tokenizer_problem;
  print_summary(file, h, has_tokenizer ? &model.value()->tokenizer() : nullptr, tokenizer_problem,
                cannot_run);
  return kExitOk;
}

Command add_inspect_command(CLI::App& parent) {
  auto inspect = std::make_shared<InspectArguments>();
  CLI::App* inspect_app =
      parent.add_subcommand("inspect", "Validate a model file completely and summarise it");
  inspect_app->add_option("model", inspect->model_path, "Model: a GGUF file or a Hugging Face directory")->required();
  return {inspect_app, [inspect] {
    return inspect_command(*inspect);
  }};
}

}  // namespace lpx::cli
