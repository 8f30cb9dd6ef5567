// One forward step of the model over a Batch: K/V of every row into the cache, logits of the
// batch's output rows out. Two implementations: LlamaForward drives a backend's per-op kernels
// on host buffers (cpu); DeviceForward hands the whole step to a backend that keeps the model
// on its own device (cuda, lpx_device_model).
//
// Threading: one engine thread.
#pragma once

#include <cstdint>

#include "engine/batch.hpp"
#include "engine/engine_error.hpp"

namespace lpx::core {

class ForwardPass {
 public:
  virtual ~ForwardPass() = default;
  virtual std::uint32_t n_vocab() const noexcept = 0;
  // Writes the logits of batch.output_rows (in order) to logits[i * n_vocab]. Throws
  // EngineError when a kernel fails.
  virtual void run(const Batch& batch, float* logits) = 0;
  // Whether run_greedy exists: the argmax computed where the logits are, only ids returned.
  virtual bool has_device_argmax() const noexcept { return false; }
  // Writes the greedy token (the lowest id among equal maxima) of each output row to
  // tokens[i]; only when has_device_argmax().
  virtual void run_greedy(const Batch& batch, std::int32_t* tokens);
};

inline void ForwardPass::run_greedy(const Batch&, std::int32_t*) {
  throw EngineError("this forward pass has no device argmax");
}

}  // namespace lpx::core
