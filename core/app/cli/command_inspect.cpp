#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "chat_template/chat_template.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/loaded_model.hpp"
#include "model/model_validation.hpp"
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

void print_summary(const core::ModelFile& file, const core::Hyperparameters& h,
                   const core::Tokenizer& tokenizer) {
  std::error_code error;
  const auto file_bytes = std::filesystem::file_size(file.path(), error);
  std::map<std::string, std::uint64_t> per_type;
  std::uint64_t tensor_bytes = 0;
  for (const lpx_tensor_view& t : file.tensors()) {
    ++per_type[type_name(t.type)];
    tensor_bytes += t.size_bytes;
  }
  std::cout << "model:          " << file.path() << "\n"
            << "format:         " << file.format_name() << " (" << mebibytes(file_bytes) << ")\n"
            << "architecture:   " << h.architecture << ": " << h.n_layer << " layers, embedding "
            << h.n_embd << ", feed-forward " << h.n_ff << ", heads " << h.n_head << " (kv "
            << h.n_head_kv << "), head dim " << h.head_dim << "\n"
            << "context:        " << h.n_ctx_train << " tokens trained, rope base "
            << h.rope_freq_base << " over " << h.n_rot << " dims, rms eps " << h.rms_norm_eps
            << "\n"
            << "parameters:     " << std::fixed << std::setprecision(1)
            << static_cast<double>(h.n_params) / 1e6 << " M, output head "
            << (h.tied_output ? "tied to the embedding" : "separate") << "\n"
            << "tensors:        " << file.tensors().size() << " (";
  bool first = true;
  for (const auto& [name, count] : per_type) {
    std::cout << (first ? "" : ", ") << name << " " << count;
    first = false;
  }
  std::cout << "), " << mebibytes(tensor_bytes) << "\n";

  std::cout << "tokenizer:      " << *file.get_string("tokenizer.ggml.model");
  if (auto pre = file.get_string("tokenizer.ggml.pre")) std::cout << ", pre '" << *pre << "'";
  std::cout << ", " << tokenizer.vocab_size() << " tokens, bos " << id_text(tokenizer.bos())
            << ", eos " << id_text(tokenizer.eos()) << ", eot " << id_text(tokenizer.eot())
            << "\n";
  std::cout << "chat template:  ";
  if (auto text = file.get_string("tokenizer.chat_template")) {
    auto parsed = core::ChatTemplate::parse(*text);
    std::cout << "present, " << text->size() << " bytes"
              << (parsed ? std::string(", supported") : ", NOT supported: " + parsed.error().message);
  } else {
    std::cout << "none (chat needs a template file: [model] chat_template = \"FILE\")";
  }
  std::cout << "\n";
}

}  // namespace

int inspect_command(const InspectArguments& arguments) {
  auto model = LoadedModel::open(arguments.model_path);
  if (!model) {
    std::cerr << "error: " << model.error() << "\n";
    return kExitRuntimeError;
  }
  auto checked = core::validate_model(model.value()->file());
  if (!checked) {
    std::cerr << "error: " << arguments.model_path << ": " << checked.error() << "\n";
    return kExitRuntimeError;
  }
  print_summary(model.value()->file(), *checked, model.value()->tokenizer());
  return kExitOk;
}

Command add_inspect_command(CLI::App& parent) {
  auto inspect = std::make_shared<InspectArguments>();
  CLI::App* inspect_app =
      parent.add_subcommand("inspect", "Validate a model file completely and summarise it");
  inspect_app->add_option("model", inspect->model_path, "Model file (GGUF)")->required();
  return {inspect_app, [inspect] {
    return inspect_command(*inspect);
  }};
}

}  // namespace lpx::cli
