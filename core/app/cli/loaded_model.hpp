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

  const core::ModelFile& file() const noexcept { return *file_; }
  const core::Tokenizer& tokenizer() const noexcept { return *tokenizer_; }

 private:
  LoadedModel();

  core::MetricsRegistry metrics_;
  core::HostServices services_;
  core::PluginRegistry registry_;
  std::unique_ptr<core::ModelFile> file_;
  std::unique_ptr<core::Tokenizer> tokenizer_;
};

}  // namespace lpx::cli
