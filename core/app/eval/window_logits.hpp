// A model on one backend that computes the logits of every position of a token window, each
// window from an empty context: what `perplexity` runs, once for the evaluated backend and
// once for the reference. The forward pass is the engine's (TransformerForward on host
// kernels, DeviceForward where the backend keeps models on its device), so the numbers are
// those the engine's answers come from.
//
// Threading: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "engine/backend.hpp"
#include "engine/forward_pass.hpp"
#include "engine/kv_cache.hpp"
#include "engine/runnable_model.hpp"
#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core::eval {

class WindowLogits {
 public:
  // `file` must outlive the result; `backend` is a quant_backend instance. Windows have at most
  // `window` tokens. Errors name the file or the backend.
  static Expected<std::unique_ptr<WindowLogits>> create(const ModelFile& file,
                                                        std::shared_ptr<PluginInstance> backend,
                                                        std::uint32_t window);

  std::uint32_t n_vocab() const noexcept { return forward_->n_vocab(); }

  // Runs `tokens` (1..window of them) at positions 0.. and writes the logits of positions
  // [first_output, tokens.size()) to logits[(p - first_output) * n_vocab()].
  Expected<bool> run(std::span<const std::int32_t> tokens, std::uint32_t first_output, float* logits);

 private:
  WindowLogits(std::unique_ptr<Backend> backend, RunnableModel runnable, std::uint32_t window);

  std::unique_ptr<Backend> backend_;
  RunnableModel runnable_;
  std::uint32_t window_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<ForwardPass> forward_;  // after cache_: a device model goes first
  BlockTable blocks_;
  Batch batch_;
};

}  // namespace lpx::core::eval
