#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "model/model_file.hpp"
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

void print_summary(const core::ModelFile& file, const core::Hyperparameters& h) {
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

  auto kind = file.get_string("tokenizer.ggml.model");
  auto tokens = file.get_array("tokenizer.ggml.tokens");
  std::cout << "tokenizer:      " << (kind ? *kind : std::string("none"));
  if (auto pre = file.get_string("tokenizer.ggml.pre")) std::cout << ", pre '" << *pre << "'";
  if (tokens) std::cout << ", " << tokens->length << " tokens";
  std::cout << "\n";
  auto chat_template = file.get_string("tokenizer.chat_template");
  std::cout << "chat template:  "
            << (chat_template ? "present (" + std::to_string(chat_template->size()) + " bytes)"
                              : std::string("none"))
            << "\n";
}

}  // namespace

int inspect_command(const InspectArguments& arguments) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  auto file = core::ModelFile::open(arguments.model_path, registry);
  if (!file) {
    std::cerr << "error: " << file.error() << "\n";
    return kExitRuntimeError;
  }
  auto checked = core::validate_model(**file);
  if (!checked) {
    std::cerr << "error: " << arguments.model_path << ": " << checked.error() << "\n";
    return kExitRuntimeError;
  }
  print_summary(**file, *checked);
  return kExitOk;
}

}  // namespace lpx::cli
