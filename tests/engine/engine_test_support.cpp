#include "engine_test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "engine/device_forward.hpp"
#include "engine/transformer_forward.hpp"
#include "model/architecture.hpp"
#include "model/model_validation.hpp"

namespace lpx::test {

namespace {

// A build carried to another machine (tools/gpu-check.sh --prebuilt) points its tests at the
// files beside it through these variables; by default, the paths of the build tree.
std::filesystem::path from_environment(const char* name, const std::filesystem::path& fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::filesystem::path(value) : fallback;
}

}  // namespace

std::filesystem::path shared_dir() {
  return from_environment("LPX_TEST_SHARED_DIR",
                          std::filesystem::path(LPX_SOURCE_DIR) / ".." / "shared");
}
std::filesystem::path smollm2_path() {
  return from_environment("LPX_TEST_MODELS_DIR", std::filesystem::path(LPX_SOURCE_DIR) / "models") /
         "SmolLM2-135M-Instruct.Q4_1.gguf";
}
std::filesystem::path gemma3_path() {
  return from_environment("LPX_TEST_MODELS_DIR", std::filesystem::path(LPX_SOURCE_DIR) / "models") /
         "gemma-3-270m-q4_k_m.gguf";
}
std::filesystem::path tiny_llama_path() {
  return shared_dir() / "models" / "llama-2-tiny-random.gguf";
}

TestHost::TestHost()
    : services_(metrics_),
      registry_({from_environment("LPX_TEST_PLUGIN_DIR", LPX_BUILTIN_PLUGIN_DIR),
                 std::filesystem::path(LPX_TEST_GOOD_PLUGIN_DIR)},  // test-device
                services_) {}

std::unique_ptr<core::Engine> TestHost::engine(const std::filesystem::path& model,
                                               const std::string& backend,
                                               const std::vector<std::string>& chain,
                                               core::EngineConfig config,
                                               const std::map<std::string, core::OptionValue>& backend_options,
                                               std::optional<std::string> chat_template_path,
                                               const std::filesystem::path& draft_model,
                                               const std::vector<core::AdapterSpec>& adapters) {
  core::EngineInputs inputs;
  inputs.adapters = adapters;
  inputs.chat_template_path = std::move(chat_template_path);
  auto file = core::ModelFile::open(model.string(), registry_);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error().message);
  if (!file) return nullptr;
  inputs.file = std::move(*file);
  if (!draft_model.empty()) {
    auto draft = core::ModelFile::open(draft_model.string(), registry_);
    EXPECT_TRUE(draft.has_value()) << (draft ? "" : draft.error().message);
    if (!draft) return nullptr;
    inputs.draft_file = std::move(*draft);
  }
  auto b = core::default_instance(registry_, backend, backend_options);
  EXPECT_TRUE(b.has_value()) << (b ? "" : b.error().message);
  if (!b) return nullptr;
  inputs.backend = b->instance;
  for (const std::string& name : chain) {
    auto link = core::default_instance(registry_, name);
    EXPECT_TRUE(link.has_value()) << (link ? "" : link.error().message);
    if (!link) return nullptr;
    inputs.sampler_chain.push_back(std::move(*link));
  }
  inputs.config = config;
  auto engine = core::build_engine(std::move(inputs), registry_);
  EXPECT_TRUE(engine.has_value()) << (engine ? "" : engine.error().message);
  return engine ? std::move(*engine) : nullptr;
}

ForwardRig::ForwardRig(TestHost& host, const std::filesystem::path& model,
                       const std::string& backend,
                       const std::map<std::string, core::OptionValue>& backend_options,
                       std::uint32_t max_context, const std::vector<core::AdapterSpec>& adapters) {
  constexpr std::uint32_t kBlock = 16;
  // A whole prompt is one batch, as the peer ran it (n_batch = n_ctx).
  const std::uint32_t kMaxRows = std::max<std::uint32_t>(512, max_context);
  auto file = core::ModelFile::open(model.string(), host.registry());
  if (!file) throw std::runtime_error(file.error().message);
  file_ = std::move(*file);
  auto h = core::validate_model(*file_);
  if (!h) throw std::runtime_error(h.error().message);
  h_ = *h;
  auto described =
      core::find_architecture(h_.architecture)->describe(*file_, h_, core::RunShape{max_context});
  if (!described) throw std::runtime_error(described.error().message);
  model_ = std::move(*described);
  for (const core::AdapterSpec& spec : adapters) {
    auto adapter = core::ResidentAdapter::load(spec, static_cast<std::uint32_t>(adapters_.size() + 1), *file_,
                                               host.registry());
    if (!adapter) throw std::runtime_error(adapter.error().message);
    adapters_.push_back(std::move(*adapter));
  }
  auto instance = core::default_instance(host.registry(), backend, backend_options);
  if (!instance) throw std::runtime_error(instance.error().message);
  auto b = core::Backend::adopt(instance->instance);
  if (!b) throw std::runtime_error(b.error().message);
  backend_ = std::make_unique<core::Backend>(std::move(*b));
  core::KvCacheShape shape{h_.n_layer, h_.n_head_kv, h_.head_dim, kBlock, max_context / kBlock};
  shape.host_storage = !backend_->has_device_models();
  cache_ = std::make_unique<core::KvCache>(shape);
  if (auto runs = backend_->check_features(model_.desc()); !runs) {
    throw std::runtime_error(runs.error().message);
  }
  if (backend_->has_device_models()) {
    forward_ = std::make_unique<core::DeviceForward>(model_, *backend_, *cache_, kMaxRows, 1,
                                                     max_context);
  } else {
    forward_ = std::make_unique<core::TransformerForward>(model_, *backend_, *cache_, kMaxRows,
                                                          max_context, adapters_);
  }
  blocks_ = core::BlockTable(max_context, kBlock);
  batch_.reserve(kMaxRows, 1);
  logits_.resize(h_.n_vocab);
}

ForwardRig::~ForwardRig() = default;

const std::vector<float>& ForwardRig::feed(const std::vector<std::int32_t>& tokens) {
  cache_->ensure(blocks_, position_ + static_cast<std::uint32_t>(tokens.size()));
  batch_.clear();
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    batch_.tokens.push_back(tokens[i]);
    batch_.positions.push_back(static_cast<std::int32_t>(position_ + i));
  }
  batch_.sequences.push_back({&blocks_, 0, static_cast<std::uint32_t>(tokens.size()), adapter_});
  batch_.output_rows.push_back(static_cast<std::uint32_t>(tokens.size() - 1));
  forward_->run(batch_, logits_.data());
  position_ += static_cast<std::uint32_t>(tokens.size());
  return logits_;
}

void ForwardRig::use_adapter(const std::string& name) {
  adapter_ = nullptr;
  for (const auto& a : adapters_) {
    if (a->name() == name) adapter_ = a.get();
  }
  if (!name.empty() && adapter_ == nullptr) throw std::runtime_error("no adapter '" + name + "'");
}

void ForwardRig::reset() {
  cache_->release(blocks_);
  position_ = 0;
}

namespace {

std::int32_t collect_token(void* user, const lpx_token_event* e) {
  auto& out = *static_cast<Generation*>(user);
  if (e->token >= 0) out.tokens.push_back(e->token);
  out.text.append(e->text, e->text_length);
  return 0;
}

void collect_result(void* user, const lpx_request_result* r) {
  auto& out = *static_cast<Generation*>(user);
  out.finish_reason = r->finish_reason;
  out.error = r->error ? r->error->message : "";
  out.error_code = r->error ? static_cast<lpx_status_code>(r->error->code) : LPX_OK;
  out.prompt_tokens = r->prompt_tokens;
  out.cached_tokens = r->cached_tokens;
}

}  // namespace

Generation generate(core::Engine& engine, lpx_request request) {
  Generation g;
  request.struct_size = sizeof(request);
  request.user = &g;
  request.on_token = &collect_token;
  request.on_done = &collect_result;
  auto id = engine.submit(request);
  EXPECT_TRUE(id.has_value()) << (id ? "" : id.error().message);
  if (!id) {
    g.error = id.error().message;
    return g;
  }
  engine.wait(*id);
  return g;
}

std::vector<Generation> generate_together(core::Engine& engine, std::vector<lpx_request> requests) {
  std::vector<Generation> results(requests.size());
  for (std::size_t i = 0; i < requests.size(); ++i) {
    requests[i].struct_size = sizeof(lpx_request);
    requests[i].user = &results[i];
    requests[i].on_token = &collect_token;
    requests[i].on_done = &collect_result;
  }
  auto ids = engine.submit_together(requests);
  EXPECT_TRUE(ids.has_value()) << (ids ? "" : ids.error().message);
  if (!ids) {
    for (Generation& g : results) g.error = ids.error().message;
    return results;
  }
  for (std::uint64_t id : *ids) engine.wait(id);
  return results;
}

}  // namespace lpx::test
