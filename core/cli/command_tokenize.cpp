#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "model/model_file.hpp"
#include "tokenizer/tokenizer.hpp"

namespace lpx::cli {

int tokenize_command(const TokenizeArguments& arguments) {
  std::string text = arguments.text;
  if (!arguments.file.empty()) {
    std::ifstream in(arguments.file, std::ios::binary);
    if (!in) {
      std::cerr << "error: " << arguments.file << ": cannot read\n";
      return kExitRuntimeError;
    }
    std::ostringstream content;
    content << in.rdbuf();
    text = content.str();
  }
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  auto file = core::ModelFile::open(arguments.model_path, registry);
  if (!file) {
    std::cerr << "error: " << file.error() << "\n";
    return kExitRuntimeError;
  }
  auto vocabulary = core::load_vocabulary(**file);
  if (!vocabulary) {  // the message starts with the path already
    std::cerr << "error: " << vocabulary.error() << "\n";
    return kExitRuntimeError;
  }
  auto tokenizer = core::Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) {
    std::cerr << "error: " << arguments.model_path << ": " << tokenizer.error() << "\n";
    return kExitRuntimeError;
  }
  core::Tokenizer::EncodeOptions options;
  options.add_bos = !arguments.no_bos;
  options.parse_special = arguments.parse_special;
  auto ids = tokenizer.value()->encode(text, options);
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
