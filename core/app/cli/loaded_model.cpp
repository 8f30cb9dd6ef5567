#include "cli/loaded_model.hpp"

namespace lpx::cli {

LoadedModel::LoadedModel()
    : services_(metrics_), registry_(core::default_plugin_search_path(), services_) {}

core::Expected<std::unique_ptr<LoadedModel>> LoadedModel::open(const std::string& path) {
  std::unique_ptr<LoadedModel> model(new LoadedModel());
  auto file = core::ModelFile::open(path, model->registry_);
  if (!file) return core::unexpected(file.error());
  model->file_ = std::move(*file);
  auto vocabulary = core::load_vocabulary(*model->file_);
  if (!vocabulary) return core::unexpected(vocabulary.error());  // starts with the path
  auto tokenizer = core::Tokenizer::create(std::move(*vocabulary));
  if (!tokenizer) return core::unexpected(tokenizer.error().with_context(path));
  model->tokenizer_ = std::move(*tokenizer);
  return model;
}

}  // namespace lpx::cli
