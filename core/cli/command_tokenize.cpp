#include <iostream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/loaded_model.hpp"
#include "util/read_file.hpp"

namespace lpx::cli {

int tokenize_command(const TokenizeArguments& arguments) {
  std::string text = arguments.text;
  if (!arguments.file.empty()) {
    auto content = core::read_whole_file(arguments.file);
    if (!content) {
      std::cerr << "error: " << content.error() << "\n";
      return kExitRuntimeError;
    }
    text = std::move(*content);
  }
  auto model = LoadedModel::open(arguments.model_path);
  if (!model) {
    std::cerr << "error: " << model.error() << "\n";
    return kExitRuntimeError;
  }
  core::Tokenizer::EncodeOptions options;
  options.add_bos = !arguments.no_bos;
  options.parse_special = arguments.parse_special;
  auto ids = model.value()->tokenizer().encode(text, options);
  if (!ids) {
    std::cerr << "error: " << ids.error() << "\n";
    return kExitRuntimeError;
  }
  std::string out = "[";
  for (std::size_t k = 0; k < ids->size(); ++k) out += (k ? ", " : "") + std::to_string((*ids)[k]);
  std::cout << out << "]\n";
  return kExitOk;
}

}  // namespace lpx::cli
