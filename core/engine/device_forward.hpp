// The forward pass on a backend's own device (device models, e.g. cuda): weights, the
// paged KV pools and activations live in device memory; each step sends the batch's token ids,
// positions and block tables and gets the output rows' logits back. The core keeps the KV
// block bookkeeping (KvCache without host storage), so scheduling is the same for every
// backend.
//
// Threading: one engine thread. run() does not allocate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.hpp"
#include "engine/forward_pass.hpp"
#include "engine/kv_cache.hpp"
#include "model/transformer_model.hpp"

namespace lpx::core {

class DeviceForward final : public ForwardPass {
 public:
  // Loads the model onto the backend's device with a KV pool shaped like `cache` (which must
  // have no host storage). Throws EngineError with the backend's reason.
  DeviceForward(const TransformerModel& model, Backend& backend, const KvCache& cache,
                std::uint32_t max_rows, std::uint32_t max_sequences, std::uint32_t max_context);
  ~DeviceForward() override;
  DeviceForward(const DeviceForward&) = delete;
  DeviceForward& operator=(const DeviceForward&) = delete;

  std::uint32_t n_vocab() const noexcept override { return n_vocab_; }
  void run(const Batch& batch, float* logits) override;
  bool has_device_argmax() const noexcept override { return true; }
  bool has_device_sampling() const noexcept override { return device_sampling_; }
  void pick_tokens(const Batch& batch, const lpx_sampling_program* programs,
                   std::int32_t* tokens) override;
  bool can_queue() const noexcept override { return queued_steps_; }
  void queue_picks(const Batch& batch, const lpx_sampling_program* programs,
                   const std::int32_t* previous_outputs, std::int32_t* tokens) override;
  void collect() override;

  // What the device holds, for the engine's start-up log line.
  std::string describe() const;

 private:
  // The step's lpx_forward_args (block tables staged in the members below, which the backend
  // has read when forward or enqueue returns).
  lpx_forward_args arguments(const Batch& batch, float* logits, std::int32_t* tokens,
                             const lpx_sampling_program* programs);
  void forward(const Batch& batch, float* logits, std::int32_t* tokens,
               const lpx_sampling_program* programs);

  Backend& backend_;
  lpx_device_model* model_ = nullptr;
  lpx_device_model_info info_{};
  std::string device_name_;
  bool device_sampling_;
  bool queued_steps_;  // the backend has model_enqueue / model_wait
  std::uint32_t n_vocab_;
  std::uint32_t table_stride_;  // blocks of the longest possible sequence
  std::vector<std::uint32_t> sequence_rows_;
  std::vector<std::int32_t> block_tables_;
};

}  // namespace lpx::core
