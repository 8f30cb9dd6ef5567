#include "engine/device_forward.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace lpx::core {
namespace {

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

}  // namespace

DeviceForward::DeviceForward(const TransformerModel& model, Backend& backend,
                             const KvCache& cache, std::uint32_t max_rows,
                             std::uint32_t max_sequences, std::uint32_t max_context)
    : backend_(backend),
      device_sampling_(backend.has_device_sampling()),
      queued_steps_(backend.has_queued_steps()),
      n_vocab_(model.desc().n_vocab),
      table_stride_(cache.blocks_for(max_context)) {
  lpx_transformer_desc desc = model.desc();
  desc.kv_block_size = cache.shape().block_size;
  desc.kv_blocks = cache.shape().n_blocks;
  desc.max_rows = max_rows;
  desc.max_sequences = max_sequences;
  desc.max_context = max_context;
  model_ = backend_.load_model(desc, info_);
  device_name_ = info_.device_name != nullptr ? info_.device_name : backend_.name();
  sequence_rows_.resize(std::size_t{max_sequences} + 1);
  block_tables_.resize(std::size_t{max_sequences} * table_stride_);
}

DeviceForward::~DeviceForward() { backend_.free_model(model_); }

std::string DeviceForward::describe() const {
  return fmt::format("{}: weights {:.1f} MiB, KV cache {:.1f} MiB, workspace {:.1f} MiB; "
                     "{:.0f} of {:.0f} MiB free",
                     device_name_, mib(info_.weight_bytes), mib(info_.kv_cache_bytes),
                     mib(info_.workspace_bytes), mib(info_.device_free_bytes),
                     mib(info_.device_total_bytes));
}

void DeviceForward::run(const Batch& batch, float* logits) {
  forward(batch, logits, nullptr, nullptr);
}

void DeviceForward::pick_tokens(const Batch& batch, const lpx_sampling_program* programs,
                                std::int32_t* tokens) {
  if (programs != nullptr && !device_sampling_) {
    throw EngineError("backend '" + backend_.name() + "' cannot run sampling programs");
  }
  forward(batch, nullptr, tokens, programs);
}

void DeviceForward::queue_picks(const Batch& batch, const lpx_sampling_program* programs,
                                const std::int32_t* previous_outputs, std::int32_t* tokens) {
  if (programs != nullptr && !device_sampling_) {
    throw EngineError("backend '" + backend_.name() + "' cannot run sampling programs");
  }
  lpx_forward_args args = arguments(batch, nullptr, tokens, programs);
  args.previous_outputs = previous_outputs;
  backend_.enqueue(model_, args);
}

void DeviceForward::collect() { backend_.wait(model_); }

void DeviceForward::forward(const Batch& batch, float* logits, std::int32_t* tokens,
                            const lpx_sampling_program* programs) {
  const lpx_forward_args args = arguments(batch, logits, tokens, programs);
  backend_.forward(model_, args);
}

lpx_forward_args DeviceForward::arguments(const Batch& batch, float* logits,
                                          std::int32_t* tokens,
                                          const lpx_sampling_program* programs) {
  const auto n_sequences = static_cast<std::uint32_t>(batch.sequences.size());
  for (std::uint32_t s = 0; s < n_sequences; ++s) {
    const BatchSequence& sequence = batch.sequences[s];
    sequence_rows_[s] = sequence.first_row;
    // Only the blocks the sequence holds; the rest of its stride is never read.
    const std::size_t blocks = std::min<std::size_t>(sequence.blocks->size(), table_stride_);
    std::copy_n(sequence.blocks->data(), blocks,
                block_tables_.begin() + std::size_t{s} * table_stride_);
  }
  sequence_rows_[n_sequences] = batch.rows();
  lpx_forward_args args{};
  args.struct_size = sizeof(args);
  args.n_rows = batch.rows();
  args.tokens = batch.tokens.data();
  args.positions = batch.positions.data();
  args.n_sequences = n_sequences;
  args.sequence_rows = sequence_rows_.data();
  args.block_tables = block_tables_.data();
  args.block_table_stride = table_stride_;
  args.n_outputs = static_cast<std::uint32_t>(batch.output_rows.size());
  args.output_rows = batch.output_rows.data();
  args.logits = logits;
  args.argmax = tokens;
  args.sampling = programs;
  return args;
}

}  // namespace lpx::core
