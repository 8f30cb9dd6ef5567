// What a command needs to work with one model file: the plugins that read it, the file, and its
// tokenizer, alive together and destroyed in the right order.
#pragma once

#include <memory>
#include <string>

#include "model/model_file.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

class LoadedModel {
 public:
  // Opens `path` with the model_format plugins on the search path and builds its tokenizer.
  // Errors start with the path.
  static core::Expected<std::unique_ptr<LoadedModel>> open(const std::string& path);
  // As open, but a well-formed file whose tokenizer this build does not support (an
  // LPX_ERR_UNSUPPORTED failure) opens without one: has_tokenizer() is false and
  // tokenizer_problem() says why. For `inspect`, which summarises what it cannot run.
  static core::Expected<std::unique_ptr<LoadedModel>> open_for_inspection(const std::string& path);

  const core::ModelFile& file() const noexcept { return *file_; }
  bool has_tokenizer() const noexcept { return tokenizer_ != nullptr; }
  const core::Tokenizer& tokenizer() const noexcept { return *tokenizer_; }
  const core::Status& tokenizer_problem() const noexcept { return tokenizer_problem_; }

 private:
  LoadedModel();
  static core::Expected<std::unique_ptr<LoadedModel>> open(const std::string& path,
                                                          bool unsupported_tokenizer_ok);

  core::MetricsRegistry metrics_;
  core::HostServices services_;
  core::PluginRegistry registry_;
  std::unique_ptr<core::ModelFile> file_;
  std::unique_ptr<core::Tokenizer> tokenizer_;
  core::Status tokenizer_problem_;
};

}  // namespace lpx::cli
