#include "cli/loaded_model.hpp"

namespace lpx::cli {

LoadedModel::LoadedModel()
    : services_(metrics_), registry_(core::default_plugin_search_path(), services_) {}

core::Expected<std::unique_ptr<LoadedModel>> LoadedModel::open(const std::string& path) {
  return open(path, false);
}

core::Expected<std::unique_ptr<LoadedModel>> LoadedModel::open_for_inspection(
    const std::string& path) {
  return open(path, true);
}

core::Expected<std::unique_ptr<LoadedModel>> LoadedModel::open(const std::string& path,
                                                               bool unsupported_tokenizer_ok) {
  std::unique_ptr<LoadedModel> model(new LoadedModel());
  auto file = core::ModelFile::open(path, model->registry_);
  if (!file) return core::unexpected(file.error());
  model->file_ = std::move(*file);
  auto tokenizer = [&]() -> core::Expected<std::unique_ptr<core::Tokenizer>> {
    auto vocabulary = core::load_vocabulary(*model->file_);
    if (!vocabulary) return core::unexpected(vocabulary.error());  // starts with the path
    auto created = core::Tokenizer::create(std::move(*vocabulary));
    if (!created) return core::unexpected(created.error().with_context(path));
    return created;
  }();
  if (tokenizer) {
    model->tokenizer_ = std::move(*tokenizer);
  } else if (unsupported_tokenizer_ok && tokenizer.error().code == LPX_ERR_UNSUPPORTED) {
    model->tokenizer_problem_ = std::move(tokenizer).error();
  } else {
    return core::unexpected(std::move(tokenizer).error());
  }
  return model;
}

}  // namespace lpx::cli
