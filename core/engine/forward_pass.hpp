// One forward step of the model over a Batch: K/V of every row into the cache, logits of the
// batch's output rows out. Two implementations, both of the model's transformer description:
// TransformerForward drives a backend's per-op kernels on host buffers (cpu); DeviceForward
// hands the whole step to a backend that keeps the model on its own device (cuda,
// lpx_device_model).
//
// Threading: one engine thread.
#pragma once

#include <cstdint>

#include "engine/batch.hpp"
#include "engine/engine_error.hpp"
#include "lpx/kinds/sampling_program.h"

namespace lpx::core {

class ForwardPass {
 public:
  virtual ~ForwardPass() = default;
  virtual std::uint32_t n_vocab() const noexcept = 0;
  // Writes the logits of batch.output_rows (in order) to logits[i * n_vocab]. Throws
  // EngineError when a kernel fails.
  virtual void run(const Batch& batch, float* logits) = 0;
  // Whether pick_tokens exists with programs = nullptr: the argmax computed where the logits
  // are, only ids returned.
  virtual bool has_device_argmax() const noexcept { return false; }
  // Whether pick_tokens also runs sampling programs there.
  virtual bool has_device_sampling() const noexcept { return false; }
  // Writes the token each output row picks to tokens[i]: the greedy one (the lowest id among
  // equal maxima) when `programs` is null, else the one programs[i] picks. Only where
  // has_device_argmax() / has_device_sampling().
  virtual void pick_tokens(const Batch& batch, const lpx_sampling_program* programs,
                           std::int32_t* tokens);

  // Queued steps, where can_queue(): queue_picks is pick_tokens that returns once the step is
  // queued on the device; `tokens` (and the batch's block tables) are the step's until the
  // collect() that completes it writes the picks there. At most two steps are queued.
  // previous_outputs: NULL, or per row -1 (its token is batch.tokens[r]) or the output row
  // of the step queued just before whose pick is this row's token, taken on the device.
  // collect() completes the oldest queued step; both throw EngineError when a step fails.
  virtual bool can_queue() const noexcept { return false; }
  virtual void queue_picks(const Batch& batch, const lpx_sampling_program* programs,
                           const std::int32_t* previous_outputs, std::int32_t* tokens);
  virtual void collect();
};

inline void ForwardPass::pick_tokens(const Batch&, const lpx_sampling_program*, std::int32_t*) {
  throw EngineError("this forward pass cannot pick tokens on its device");
}
inline void ForwardPass::queue_picks(const Batch&, const lpx_sampling_program*,
                                     const std::int32_t*, std::int32_t*) {
  throw EngineError("this forward pass cannot queue steps");
}
inline void ForwardPass::collect() { throw EngineError("this forward pass cannot queue steps"); }

}  // namespace lpx::core
