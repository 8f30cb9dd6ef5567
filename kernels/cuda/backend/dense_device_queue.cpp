// DenseDeviceModel's queued steps (ABI 2.8, model_enqueue / model_wait): a step is staged in a
// slot of its own, launched (graph, persistent kernel or kernels, as model_forward launches
// it) with its picks copied back to that slot, and an event recorded after it; the call
// returns without synchronising. model_wait waits for the oldest step's event and hands its
// picks over. The stream keeps the steps in order, so a step's rows that take the previous
// step's picks read them from argmax_, where that step's last kernel left them, before this
// step's head overwrites them: the host never touches those tokens on the way.
#include <cstring>

#include <lpx/cpp/status.hpp>

#include "cuda_check.hpp"
#include "dense_device_model.hpp"

namespace lpx::cuda_backend {

void DenseDeviceModel::enqueue(const lpx_forward_args& a) {
  // The SDK has checked the contract: argmax set, no logits, fewer than two queued, and
  // previous_outputs naming outputs of the step queued just before.
  const int slot = (oldest_slot_ + queued_count_) % 2;
  launch_step(a, slot, lpx::previous_outputs(a));
  const Staging& staged = staging_[static_cast<std::size_t>(slot)];
  if (const cudaError_t recorded = cudaEventRecord(staged.done.get(), stream_);
      recorded != cudaSuccess) {
    recover();
    check_cuda(recorded, "recording the end of a queued step");
  }
  queued_[static_cast<std::size_t>(slot)] = {a.argmax, a.n_outputs, false};
  ++queued_count_;
}

void DenseDeviceModel::wait() {
  const int index = oldest_slot_;
  const QueuedStep step = queued_[static_cast<std::size_t>(index)];
  oldest_slot_ = 1 - index;
  --queued_count_;
  const Staging& slot = staging_[static_cast<std::size_t>(index)];
  if (step.doomed) {
    (void)cudaEventSynchronize(slot.done.get());  // off the slot before it is staged again
    throw lpx::Error(LPX_ERR_INTERNAL, "a step queued before this one failed; its tokens were "
                                       "that step's picks");
  }
  if (const cudaError_t ran = cudaEventSynchronize(slot.done.get()); ran != cudaSuccess) {
    if (queued_count_ > 0) queued_[static_cast<std::size_t>(oldest_slot_)].doomed = true;
    recover();
    check_cuda(ran, "running a queued step");
  }
  std::memcpy(step.argmax, slot.argmax.get(), step.outputs * sizeof(std::int32_t));
}

}  // namespace lpx::cuda_backend
