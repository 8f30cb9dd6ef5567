#include "engine_test_support.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

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
                                               const std::map<std::string, core::OptionValue>& backend_options) {
  core::EngineInputs inputs;
  auto file = core::ModelFile::open(model.string(), registry_);
  EXPECT_TRUE(file.has_value()) << (file ? "" : file.error());
  if (!file) return nullptr;
  inputs.file = std::move(*file);
  auto b = core::default_instance(registry_, backend, backend_options);
  EXPECT_TRUE(b.has_value()) << (b ? "" : b.error());
  if (!b) return nullptr;
  inputs.backend = b->instance;
  for (const std::string& name : chain) {
    auto link = core::default_instance(registry_, name);
    EXPECT_TRUE(link.has_value()) << (link ? "" : link.error());
    if (!link) return nullptr;
    inputs.sampler_chain.push_back(std::move(*link));
  }
  inputs.config = config;
  auto engine = core::build_engine(std::move(inputs), registry_);
  EXPECT_TRUE(engine.has_value()) << (engine ? "" : engine.error());
  return engine ? std::move(*engine) : nullptr;
}

Generation generate(core::Engine& engine, lpx_request request) {
  Generation g;
  request.struct_size = sizeof(request);
  request.user = &g;
  request.on_token = [](void* user, const lpx_token_event* e) -> std::int32_t {
    auto& out = *static_cast<Generation*>(user);
    if (e->token >= 0) out.tokens.push_back(e->token);
    out.text.append(e->text, e->text_length);
    return 0;
  };
  request.on_done = [](void* user, const lpx_request_result* r) {
    auto& out = *static_cast<Generation*>(user);
    out.finish_reason = r->finish_reason;
    out.error = r->error ? r->error->message : "";
    out.prompt_tokens = r->prompt_tokens;
    out.cached_tokens = r->cached_tokens;
  };
  auto id = engine.submit(request);
  EXPECT_TRUE(id.has_value()) << (id ? "" : id.error());
  if (!id) {
    g.error = id.error();
    return g;
  }
  engine.wait(*id);
  return g;
}

}  // namespace lpx::test
