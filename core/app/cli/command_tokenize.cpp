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

Command add_tokenize_command(CLI::App& parent) {
  auto tokenize = std::make_shared<TokenizeArguments>();
  CLI::App* tokenize_app =
      parent.add_subcommand("tokenize", "Print the token ids of a text as a JSON array");
  tokenize_app->add_option("--model", tokenize->model_path, "Model file")->required();
  auto* text_option = tokenize_app->add_option("--text", tokenize->text, "Text to tokenize");
  auto* file_option = tokenize_app->add_option("--file", tokenize->file, "File to tokenize");
  text_option->excludes(file_option);
  tokenize_app->add_flag("--no-bos", tokenize->no_bos, "Do not add BOS even if the model asks");
  tokenize_app->add_flag("--parse-special", tokenize->parse_special,
                         "Turn special-token text like <|im_start|> into those tokens");
  return {tokenize_app, [tokenize, text_option, file_option] {
    if (text_option->count() == 0 && file_option->count() == 0) {
      std::cerr << "error: tokenize needs --text STR or --file PATH\n";
      return kExitUsageError;
    }
    return tokenize_command(*tokenize);
  }};
}

}  // namespace lpx::cli
