// Building real engines for tests: the built-in plugins of this build, a model file, a backend
// and a sampler chain by name.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/batch.hpp"
#include "engine/engine.hpp"
#include "engine/forward_pass.hpp"
#include "engine/kv_cache.hpp"
#include "engine/engine_builder.hpp"
#include "model/resident_adapter.hpp"
#include "model/transformer_model.hpp"
#include "metrics/metrics_registry.hpp"
#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace lpx::test {

std::filesystem::path shared_dir();
std::filesystem::path smollm2_path();     // the default model, installed by tools/setup.sh
std::filesystem::path tiny_llama_path();  // ../shared/models/llama-2-tiny-random.gguf
std::filesystem::path gemma3_path();      // Gemma 3 270M Q4_K_M, installed by tools/setup.sh

// The plugin host of a test: registry over the build's plugin folder. Outlives its engines.
class TestHost {
 public:
  TestHost();
  core::PluginRegistry& registry() noexcept { return registry_; }

  // An engine for `model` with backend `backend` and the sampler links `chain` (defaults).
  std::unique_ptr<core::Engine> engine(const std::filesystem::path& model,
                                       const std::string& backend = "cpu",
                                       const std::vector<std::string>& chain = {"greedy"},
                                       core::EngineConfig config = {},
                                       const std::map<std::string, core::OptionValue>& backend_options = {},
                                       std::optional<std::string> chat_template_path = {},
                                       const std::filesystem::path& draft_model = {},
                                       const std::vector<core::AdapterSpec>& adapters = {});

 private:
  core::MetricsRegistry metrics_;
  core::HostServices services_;
  core::PluginRegistry registry_;
};

// The forward pass alone, one sequence fed token by token (teacher forcing): a host-memory
// backend through TransformerForward, a device backend (cuda) through DeviceForward.
class ForwardRig {
 public:
  ForwardRig(TestHost& host, const std::filesystem::path& model, const std::string& backend,
             const std::map<std::string, core::OptionValue>& backend_options = {},
             std::uint32_t max_context = 1024, const std::vector<core::AdapterSpec>& adapters = {});
  ~ForwardRig();
  std::uint32_t n_vocab() const noexcept { return h_.n_vocab; }
  // Feeds `tokens` at the next positions as one batch; returns the logits of the last one.
  const std::vector<float>& feed(const std::vector<std::int32_t>& tokens);
  // Forgets the sequence: the next feed starts at position 0.
  void reset();
  // Later feeds run with the resident adapter `name` (one of the constructor's); "": none.
  void use_adapter(const std::string& name);

 private:
  std::unique_ptr<core::ModelFile> file_;
  core::Hyperparameters h_;
  core::TransformerModel model_;
  std::unique_ptr<core::Backend> backend_;
  std::unique_ptr<core::KvCache> cache_;
  std::unique_ptr<core::ForwardPass> forward_;
  core::BlockTable blocks_;
  core::Batch batch_;
  std::vector<float> logits_;
  std::uint32_t position_ = 0;
  std::vector<std::unique_ptr<core::ResidentAdapter>> adapters_;
  const core::ResidentAdapter* adapter_ = nullptr;
};

// Runs one request to the end on `engine`, collecting every generated token and the text.
struct Generation {
  std::vector<std::int32_t> tokens;
  std::string text;
  int32_t finish_reason = 0;
  std::string error;
  lpx_status_code error_code = LPX_OK;  // the error's code, where there is one
  std::uint32_t prompt_tokens = 0;
  std::uint32_t cached_tokens = 0;
};
Generation generate(core::Engine& engine, lpx_request request);
// Several requests queued together (the same step admits them, as far as the batch allows),
// each run to its end; the results in the order of `requests`.
std::vector<Generation> generate_together(core::Engine& engine, std::vector<lpx_request> requests);

}  // namespace lpx::test
