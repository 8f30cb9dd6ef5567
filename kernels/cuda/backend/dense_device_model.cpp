#include "dense_device_model.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <lpx/cpp/status.hpp>

#include "cuda_check.hpp"
#include "reference/sampling_program.hpp"

namespace lpx::cuda_backend {
namespace {

namespace k = kernels::cuda;

constexpr int kInputArrays = 5;       // tokens, positions, slots, row_sequence, output_rows

[[noreturn]] void invalid(const std::string& message) {
  throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "forward: " + message);
}

}  // namespace

DenseDeviceModel::DenseDeviceModel(const CudaDevice& device, const DenseModel& desc,
                                   bool use_graphs, bool use_megakernel)
    : device_(device),
      shape_(desc),
      device_name_(device.describe()),
      q_width_(static_cast<int>(desc.n_head * desc.head_dim)),
      kv_width_(static_cast<int>(desc.n_head_kv * desc.head_dim)),
      table_stride_(static_cast<int>((desc.max_context + desc.kv_block_size - 1) /
                                     desc.kv_block_size)),
      sink_slot_(static_cast<int>(desc.kv_blocks * desc.kv_block_size)),
      use_graphs_(use_graphs),
      weights_(desc),
      stream_(stream_owner_.get()),
      pool_elements_(std::size_t{desc.kv_blocks + 1} * desc.kv_block_size * kv_width_),
      max_rows_(static_cast<int>(std::max(desc.max_rows, desc.max_sequences))),
      max_sequences_(static_cast<int>(desc.max_sequences)),
      attention_rows_(std::min(max_rows_, kAttentionRows)),
      attention_splits_(k::attention_splits(device.multiprocessors,
                                            static_cast<int>(desc.n_head_kv))),
      use_megakernel_(use_megakernel) {
  for (std::size_t i = 0; i < desc.layers.size(); ++i) {
    const lpx_rope_params& from = desc.layers[i].rope;
    k::RopeArgs rope;
    rope.mode = from.mode;
    rope.n_rot = static_cast<int>(from.n_rot);
    rope.freq_base = from.freq_base;
    rope.freq_scale = from.freq_scale;
    rope.freq_factors = weights_.layers[i].rope_freq_factors;  // on the device
    rope.attn_factor = from.attn_factor;
    ropes_.push_back(rope);
    windows_.push_back(static_cast<int>(desc.layers[i].window));
  }
  // The widest window when every layer has one (how far back any row reads), else 0.
  kv_window_ = *std::max_element(windows_.begin(), windows_.end());
  if (*std::min_element(windows_.begin(), windows_.end()) == 0) kv_window_ = 0;
  const bool separate_residual =
      desc.residual_scale != 1.0f ||
      std::any_of(desc.layers.begin(), desc.layers.end(), [](const DenseLayer& l) {
        return l.post_attention_norm != nullptr || l.post_ffn_norm != nullptr;
      });
  shape_.layers.clear();  // only the numbers are kept
  shape_.split_views.clear();
  shape_.token_embd = shape_.output_norm = shape_.output = nullptr;
  kv_ = DeviceArray<std::uint16_t>(pool_elements_ * 2 * desc.n_layer, "the KV cache");
  check_cuda(cudaMemset(kv_.get(), 0, kv_.bytes()), "clearing the KV cache");
  DeviceMatmul::Limits limits = matmul_limits(desc);  // from the hyperparameters; the weights
  limits.columns = std::max(limits.columns, weights_.max_columns());  // are validated against
  limits.weight_rows = std::max(limits.weight_rows, weights_.max_rows());  // them, but be sure
  matmul_ = std::make_unique<DeviceMatmul>(stream_, limits);

  const std::size_t rows = static_cast<std::size_t>(max_rows_);
  const std::size_t tables = static_cast<std::size_t>(max_sequences_ + 1) * table_stride_;
  const std::size_t input_count = kInputArrays * rows + tables;
  inputs_ = DeviceArray<std::int32_t>(input_count, "step inputs");
  tokens_ = inputs_.get();
  positions_ = tokens_ + rows;
  slots_ = positions_ + rows;
  row_sequence_ = slots_ + rows;
  output_rows_ = row_sequence_ + rows;
  block_tables_ = output_rows_ + rows;
  const std::size_t outputs = static_cast<std::size_t>(max_sequences_);
  for (Staging& slot : staging_) {
    slot.inputs = PinnedArray<std::int32_t>(input_count, "step inputs");
    slot.programs = PinnedArray<lpx_sampling_program>(outputs, "sampling programs");
    slot.argmax = PinnedArray<std::int32_t>(outputs, "argmax");
  }
  // The padding rows' sequence: every block is the sink block (uploaded once; steps upload
  // only their sequences' rows).
  std::vector<std::int32_t> pad_table(static_cast<std::size_t>(table_stride_),
                                      static_cast<std::int32_t>(desc.kv_blocks));
  check_cuda(cudaMemcpy(block_tables_ + static_cast<std::size_t>(max_sequences_) * table_stride_,
                        pad_table.data(), pad_table.size() * sizeof(std::int32_t),
                        cudaMemcpyHostToDevice),
             "uploading the padding block table");

  const std::size_t embd = desc.n_embd;
  x_ = DeviceArray<float>(rows * embd, "activations");
  q_ = DeviceArray<float>(rows * q_width_, "activations");
  attn_ = DeviceArray<float>(rows * q_width_, "activations");
  k_ = DeviceArray<float>(rows * kv_width_, "activations");
  v_ = DeviceArray<float>(rows * kv_width_, "activations");
  ffn_ = DeviceArray<float>(rows * desc.n_ff, "activations");
  const bool all_interleaved =
      std::all_of(weights_.layers.begin(), weights_.layers.end(),
                  [](const DeviceLayer& layer) { return layer.ffn_gate_up.rows > 0; });
  if (!all_interleaved) up_ = DeviceArray<float>(rows * desc.n_ff, "activations");
  if (separate_residual) proj_ = DeviceArray<float>(rows * embd, "activations");
  head_in_ = DeviceArray<float>(outputs * embd, "activations");
  logits_ = DeviceArray<float>(outputs * desc.n_vocab, "logits");
  argmax_ = DeviceArray<std::int32_t>(outputs, "argmax");
  argmax_keys_ = DeviceArray<unsigned long long>(outputs, "argmax keys");
  check_cuda(cudaMemset(argmax_keys_.get(), 0, argmax_keys_.bytes()), "clearing the argmax keys");
  host_logits_ = PinnedArray<float>(outputs * desc.n_vocab, "logits");
  programs_ = DeviceArray<lpx_sampling_program>(outputs, "sampling programs");
  attention_partial_ = DeviceArray<float>(
      k::attention_partial_floats(attention_rows_, static_cast<int>(desc.n_head),
                                  static_cast<int>(desc.head_dim), attention_splits_),
      "attention scratch");
  attention_counters_ = DeviceArray<std::uint32_t>(
      static_cast<std::size_t>(attention_rows_) * desc.n_head_kv, "attention counters");
  check_cuda(cudaMemset(attention_counters_.get(), 0, attention_counters_.bytes()),
             "clearing the attention counters");
  // The copies and the KV memset above ran on the legacy default stream, the steps run on
  // stream_ (non-blocking): nothing may still be in flight when the first step starts.
  check_cuda(cudaDeviceSynchronize(), "loading the model");
  if (use_megakernel_) prepare_megakernel();
}

DenseDeviceModel::~DenseDeviceModel() {
  cudaSetDevice(device_.index);
  cudaStreamSynchronize(stream_);
  for (auto& [bucket, graph] : graphs_) cudaGraphExecDestroy(graph);
  // Members go in reverse order: buffers and cuBLAS first, the stream after them.
}

void DenseDeviceModel::describe(lpx_device_model_info& info) const {
  info.weight_bytes = weights_.bytes();
  info.kv_cache_bytes = kv_.bytes();
  info.workspace_bytes =
      matmul_->workspace_bytes() + inputs_.bytes() + x_.bytes() + q_.bytes() + attn_.bytes() +
      k_.bytes() + v_.bytes() + ffn_.bytes() + up_.bytes() + proj_.bytes() + head_in_.bytes() +
      logits_.bytes() +
      attention_partial_.bytes() + attention_counters_.bytes() + programs_.bytes() +
      argmax_keys_.bytes() + megakernel_plan_.bytes();
  std::size_t free = 0;
  std::size_t total = 0;
  cudaMemGetInfo(&free, &total);
  info.device_free_bytes = free;
  info.device_total_bytes = total;
  info.device_name = device_name_.c_str();
}

void DenseDeviceModel::check_args(const lpx_forward_args& a) const {
  if (a.n_rows == 0 || a.n_rows > shape_.max_rows) {
    invalid(std::to_string(a.n_rows) + " rows (1 to " + std::to_string(shape_.max_rows) + ")");
  }
  if (a.n_sequences == 0 || a.n_sequences > shape_.max_sequences) {
    invalid(std::to_string(a.n_sequences) + " sequences (1 to " +
            std::to_string(shape_.max_sequences) + ")");
  }
  if (a.n_outputs > shape_.max_sequences) {
    invalid(std::to_string(a.n_outputs) + " output rows (at most max_sequences)");
  }
  if (a.sequence_rows[0] != 0 || a.sequence_rows[a.n_sequences] != a.n_rows) {
    invalid("sequence_rows must run from 0 to n_rows");
  }
  for (std::uint32_t o = 0; o < a.n_outputs; ++o) {
    if (a.output_rows[o] >= a.n_rows || (o > 0 && a.output_rows[o] <= a.output_rows[o - 1])) {
      invalid("output_rows must be ascending rows of the batch");
    }
  }
  if (a.sampling != nullptr) {
    if (a.argmax == nullptr) invalid("sampling programs need the argmax output");
    for (std::uint32_t o = 0; o < a.n_outputs; ++o) {
      if (std::string why = reference::check_sampling_program(a.sampling[o]); !why.empty()) {
        invalid("sampling program of output " + std::to_string(o) + ": " + why);
      }
    }
  }
}

int DenseDeviceModel::decode_bucket(const lpx_forward_args& a) const noexcept {
  if (!use_graphs_ || a.n_rows != a.n_sequences || a.n_outputs != a.n_rows) return 0;
  // Larger batches go to cuBLAS, which is not captured (it may load kernels on first use).
  if (a.n_rows > static_cast<std::uint32_t>(DeviceMatmul::kGemvRows)) return 0;
  int bucket = 1;
  while (bucket < static_cast<int>(a.n_rows)) bucket *= 2;
  return std::min(bucket, max_sequences_);  // at most 64: kGemvRows is a power of two
}

DenseDeviceModel::StepShape DenseDeviceModel::stage_inputs(const lpx_forward_args& a, int bucket,
                                                           int slot,
                                                           const std::int32_t* previous) {
  const std::size_t rows = static_cast<std::size_t>(max_rows_);
  std::int32_t* tokens = staging_[static_cast<std::size_t>(slot)].inputs.get();
  std::int32_t* positions = tokens + rows;
  std::int32_t* slots = positions + rows;
  std::int32_t* row_sequence = slots + rows;
  std::int32_t* output_rows = row_sequence + rows;
  std::int32_t* tables = output_rows + rows;
  const auto block_size = static_cast<std::int32_t>(shape_.kv_block_size);
  StepShape shape;
  shape.slot = slot;
  for (std::uint32_t s = 0; s < a.n_sequences; ++s) {
    const std::uint32_t begin = a.sequence_rows[s];
    const std::uint32_t end = a.sequence_rows[s + 1];
    if (end < begin || end > a.n_rows) invalid("sequence_rows must be ascending");
    const std::int32_t* table = a.block_tables + std::size_t{s} * a.block_table_stride;
    std::int32_t last = -1;
    std::int32_t first = std::numeric_limits<std::int32_t>::max();
    for (std::uint32_t r = begin; r < end; ++r) {
      const std::int32_t p = a.positions[r];
      if (p < 0 || p >= static_cast<std::int32_t>(shape_.max_context)) {
        invalid("position " + std::to_string(p) + " outside the context");
      }
      const std::int32_t block = table[p / block_size];
      if (block < 0 || block >= static_cast<std::int32_t>(shape_.kv_blocks)) {
        invalid("KV block " + std::to_string(block) + " out of range");
      }
      if (previous != nullptr && previous[r] >= 0) {
        tokens[r] = -(previous[r] + 1);  // the SDK checked previous[r] < the last step's outputs
      } else if (a.tokens[r] < 0 || a.tokens[r] >= static_cast<std::int32_t>(shape_.n_vocab)) {
        invalid("token " + std::to_string(a.tokens[r]) + " of row " + std::to_string(r) +
                " outside the vocabulary");
      } else {
        tokens[r] = a.tokens[r];
      }
      positions[r] = p;
      slots[r] = block * block_size + p % block_size;
      row_sequence[r] = static_cast<std::int32_t>(s);
      last = std::max(last, p);
      first = std::min(first, p);
    }
    if (last < 0) continue;  // a sequence without rows this step
    const std::int32_t blocks = last / block_size + 1;
    // Where every layer is windowed the cache gives back blocks no row attends to any more
    // (kv_cache.hpp): entries -1, wholly before the first row's window. No kernel reads them;
    // they map to the sink block. Every other entry must be a block of the pool.
    const std::int32_t attended_from = kv_window_ > 0 ? std::max(0, first - kv_window_ + 1) : 0;
    std::int32_t* staged = tables + std::size_t{s} * table_stride_;
    for (std::int32_t b = 0; b < blocks; ++b) {
      const bool given_back = table[b] < 0 && (b + 1) * block_size <= attended_from;
      if (!given_back && (table[b] < 0 || table[b] >= static_cast<std::int32_t>(shape_.kv_blocks))) {
        invalid("KV block " + std::to_string(table[b]) + " out of range");
      }
      staged[b] = given_back ? static_cast<std::int32_t>(shape_.kv_blocks) : table[b];
    }
    shape.table_blocks = std::max(shape.table_blocks, blocks);
  }
  if (bucket > 0) {
    for (int r = static_cast<int>(a.n_rows); r < bucket; ++r) {  // padding rows
      tokens[r] = 0;
      positions[r] = 0;
      slots[r] = sink_slot_;
      row_sequence[r] = max_sequences_;
    }
    for (int r = 0; r < bucket; ++r) output_rows[r] = r;
    shape.rows = bucket;
    shape.outputs = bucket;
    shape.outputs_are_rows = true;
  } else {
    shape.outputs_are_rows = a.n_outputs == a.n_rows;
    for (std::uint32_t o = 0; o < a.n_outputs; ++o) {
      output_rows[o] = static_cast<std::int32_t>(a.output_rows[o]);
      shape.outputs_are_rows = shape.outputs_are_rows && a.output_rows[o] == o;
    }
    shape.rows = static_cast<int>(a.n_rows);
    shape.outputs = static_cast<int>(a.n_outputs);
  }
  return shape;
}

void DenseDeviceModel::stage_programs(const lpx_forward_args& a, const StepShape& shape) {
  lpx_sampling_program* programs = staging_[static_cast<std::size_t>(shape.slot)].programs.get();
  std::copy_n(a.sampling, a.n_outputs, programs);
  lpx_sampling_program greedy{};  // padding rows of a graph bucket pick something cheap
  greedy.n_ops = 1;
  greedy.ops[0].kind = LPX_SAMPLING_GREEDY;
  std::fill(programs + a.n_outputs, programs + shape.outputs, greedy);
}

void DenseDeviceModel::upload_inputs(const StepShape& shape, int sequences, int table_width) {
  const std::size_t rows = static_cast<std::size_t>(max_rows_);
  const Staging& slot = staging_[static_cast<std::size_t>(shape.slot)];
  check_cuda(cudaMemcpyAsync(inputs_.get(), slot.inputs.get(),
                             kInputArrays * rows * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                             stream_),
             "uploading the step inputs");
  // Block tables: the sequences' rows, table_width entries of each.
  const std::size_t pitch = static_cast<std::size_t>(table_stride_) * sizeof(std::int32_t);
  check_cuda(cudaMemcpy2DAsync(block_tables_, pitch, slot.inputs.get() + kInputArrays * rows,
                               pitch, static_cast<std::size_t>(table_width) * sizeof(std::int32_t),
                               static_cast<std::size_t>(sequences), cudaMemcpyHostToDevice,
                               stream_),
             "uploading the block tables");
  if (shape.programs) {
    check_cuda(cudaMemcpyAsync(programs_.get(), slot.programs.get(),
                               static_cast<std::size_t>(shape.outputs) *
                                   sizeof(lpx_sampling_program),
                               cudaMemcpyHostToDevice, stream_),
               "uploading the sampling programs");
  }
}

void DenseDeviceModel::read_back_tokens(const StepShape& shape) {
  check_cuda(cudaMemcpyAsync(staging_[static_cast<std::size_t>(shape.slot)].argmax.get(),
                             argmax_.get(),
                             static_cast<std::size_t>(shape.outputs) * sizeof(std::int32_t),
                             cudaMemcpyDeviceToHost, stream_),
             "reading the token ids back");
}

k::GemvOutput DenseDeviceModel::gate_up_output() const {
  const k::GemvStore pairs = shape_.gelu ? k::GemvStore::kGegluPairs : k::GemvStore::kSwigluPairs;
  return k::single_gemv_output(ffn_.get(), shape_.n_ff, nullptr, pairs);
}

k::GemvOutput DenseDeviceModel::head_output(bool fused_argmax) const {
  k::GemvOutput head = k::single_gemv_output(logits_.get(), shape_.n_vocab);
  head.scale = shape_.logit_scale;
  head.softcap = shape_.final_softcap;
  if (fused_argmax) head.argmax_keys = argmax_keys_.get();
  return head;
}

k::GemvOutput DenseDeviceModel::qkv_output(const DeviceLayer& layer) const {
  k::GemvOutput qkv;
  qkv.parts[0] = {q_.get(), layer.wq.rows, layer.bq};
  qkv.parts[1] = {k_.get(), layer.wk.rows, layer.bk};
  qkv.parts[2] = {v_.get(), layer.wv.rows, layer.bv};
  qkv.count = 3;
  return qkv;
}

k::RopeStoreArgs DenseDeviceModel::rope_store_args(int rows, int index) const {
  const DeviceLayer& layer = weights_.layers[static_cast<std::size_t>(index)];
  std::uint16_t* k_pool = kv_.get() + std::size_t{2} * index * pool_elements_;
  k::RopeStoreArgs store;
  store.q = q_.get();
  store.k = k_.get();
  store.v = v_.get();
  store.rows = rows;
  store.q_heads = static_cast<int>(shape_.n_head);
  store.kv_heads = static_cast<int>(shape_.n_head_kv);
  store.head_dim = static_cast<int>(shape_.head_dim);
  store.positions = positions_;
  store.k_pool = k_pool;
  store.v_pool = k_pool + pool_elements_;
  store.slots = slots_;
  store.q_norm = layer.q_norm;
  store.k_norm = layer.k_norm;
  store.norm_eps = shape_.rms_norm_eps;
  return store;
}

k::AttentionArgs DenseDeviceModel::attention_args(int index, int first, int rows) const {
  const std::uint16_t* k_pool = kv_.get() + std::size_t{2} * index * pool_elements_;
  k::AttentionArgs args;
  args.q = q_.get() + static_cast<std::size_t>(first) * q_width_;
  args.out = attn_.get() + static_cast<std::size_t>(first) * q_width_;
  args.positions = positions_ + first;
  args.row_sequence = row_sequence_ + first;
  args.block_tables = block_tables_;
  args.block_table_stride = table_stride_;
  args.n_rows = rows;
  args.n_heads = static_cast<int>(shape_.n_head);
  args.n_kv_heads = static_cast<int>(shape_.n_head_kv);
  args.head_dim = static_cast<int>(shape_.head_dim);
  args.scale = shape_.attention_scale;
  args.window = windows_[static_cast<std::size_t>(index)];
  args.softcap = shape_.attention_softcap;
  args.k_pool = k_pool;
  args.v_pool = k_pool + pool_elements_;
  args.block_size = static_cast<int>(shape_.kv_block_size);
  args.splits = attention_splits_;
  args.partial = attention_partial_.get();
  args.chunk_counters = attention_counters_.get();
  return args;
}

void DenseDeviceModel::attention_block(const StepShape& s, const DeviceLayer& layer, int index) {
  // q, k and v of the normalised residual stream, in one launch where they are stacked.
  const k::GemvInput normed{x_.get(), layer.attn_norm, shape_.rms_norm_eps};
  if (layer.wqkv.rows > 0) {
    matmul_->run(layer.wqkv, normed, qkv_output(layer), s.rows);
  } else {
    matmul_->run(layer.wq, normed, k::single_gemv_output(q_.get(), layer.wq.rows, layer.bq),
                 s.rows);
    matmul_->run(layer.wk, normed, k::single_gemv_output(k_.get(), layer.wk.rows, layer.bk),
                 s.rows);
    matmul_->run(layer.wv, normed, k::single_gemv_output(v_.get(), layer.wv.rows, layer.bv),
                 s.rows);
  }
  k::rope_and_store(rope_store_args(s.rows, index), ropes_[static_cast<std::size_t>(index)],
                    stream_);
  for (int r = 0; r < s.rows; r += attention_rows_) {
    k::attention(attention_args(index, r, std::min(attention_rows_, s.rows - r)), stream_);
  }
  add_to_residual(s, layer.wo, attn_.get(), layer.post_attention_norm);
}

void DenseDeviceModel::feed_forward_block(const StepShape& s, const DeviceLayer& layer) {
  const k::GemvInput normed{x_.get(), layer.ffn_norm, shape_.rms_norm_eps};
  if (layer.ffn_gate_up.rows > 0) {  // interleaved: SwiGLU (GeGLU) stored by the same launch
    matmul_->run(layer.ffn_gate_up, normed, gate_up_output(), s.rows);
  } else {
    matmul_->run(layer.ffn_gate, normed, k::single_gemv_output(ffn_.get(), shape_.n_ff),
                 s.rows);
    matmul_->run(layer.ffn_up, normed, k::single_gemv_output(up_.get(), shape_.n_ff), s.rows);
    if (shape_.gelu) {  // element by element: no per-call tail
      k::geglu(ffn_.get(), up_.get(), ffn_.get(), static_cast<std::size_t>(s.rows) * shape_.n_ff,
               stream_);
    } else if (shape_.n_ff % 8 == 0) {
      k::swiglu(ffn_.get(), up_.get(), ffn_.get(), static_cast<std::size_t>(s.rows) * shape_.n_ff,
                stream_);
    } else {  // the kernel, like the reference, treats a call's last n % 8 elements apart
      for (int r = 0; r < s.rows; ++r) {
        const std::size_t offset = static_cast<std::size_t>(r) * shape_.n_ff;
        k::swiglu(ffn_.get() + offset, up_.get() + offset, ffn_.get() + offset, shape_.n_ff,
                  stream_);
      }
    }
  }
  add_to_residual(s, layer.ffn_down, ffn_.get(), layer.post_ffn_norm);
}

void DenseDeviceModel::add_to_residual(const StepShape& s, const k::DeviceWeight& w,
                                       const float* in, const float* post_norm) {
  if (post_norm == nullptr && shape_.residual_scale == 1.0f) {  // the GEMV adds its products
    matmul_->run(w, k::GemvInput{in},
                 k::single_gemv_output(x_.get(), w.rows, nullptr, k::GemvStore::kAccumulate),
                 s.rows);
    return;
  }
  matmul_->run(w, k::GemvInput{in}, k::single_gemv_output(proj_.get(), w.rows), s.rows);
  k::add_residual(x_.get(), proj_.get(), post_norm, shape_.residual_scale, s.rows,
                  static_cast<int>(shape_.n_embd), shape_.rms_norm_eps, stream_);
}

void DenseDeviceModel::enqueue_step(const StepShape& s) {
  const int embd = static_cast<int>(shape_.n_embd);
  k::embed_rows(weights_.token_embd, tokens_, argmax_.get(), s.rows, x_.get(), stream_);
  k::scale_and_cap(x_.get(), static_cast<std::size_t>(s.rows) * embd, shape_.embedding_scale,
                   0.0f, stream_);
  for (std::size_t i = 0; i < weights_.layers.size(); ++i) {
    attention_block(s, weights_.layers[i], static_cast<int>(i));
    feed_forward_block(s, weights_.layers[i]);
  }
  if (s.outputs == 0) return;
  // The output rows' residual stream; a pure decode step outputs every row in order, so the
  // head reads x itself.
  const float* head_in = x_.get();
  if (!s.outputs_are_rows) {
    k::gather_rows(x_.get(), output_rows_, s.outputs, embd, head_in_.get(), stream_);
    head_in = head_in_.get();
  }
  const int n_vocab = static_cast<int>(shape_.n_vocab);
  // The head's GEMV applies the logit scale and soft cap, and picks greedy tokens itself where
  // it can (argmax_finish then writes them): no pass of its own over the logits.
  const bool fused_argmax = !s.programs && s.outputs <= DeviceMatmul::kGemvRows;
  matmul_->run(weights_.output, k::GemvInput{head_in, weights_.output_norm, shape_.rms_norm_eps},
               head_output(fused_argmax), s.outputs);
  if (s.programs) {
    k::sample_rows(logits_.get(), s.outputs, n_vocab, programs_.get(), argmax_.get(), stream_);
  } else if (fused_argmax) {
    k::argmax_finish(argmax_keys_.get(), s.outputs, argmax_.get(), stream_);
  } else {
    k::argmax_rows(logits_.get(), s.outputs, n_vocab, argmax_.get(), stream_);
  }
}

void DenseDeviceModel::run_graph(const StepShape& s) {
  const std::tuple<int, bool, int> key{s.rows, s.programs, s.slot};
  auto it = graphs_.find(key);
  if (it == graphs_.end()) {
    cudaGraph_t graph = nullptr;
    check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
               "capturing the decode step");
    try {
      // The whole step: inputs up (from the pinned staging area, read when the graph runs;
      // whole table rows, as the longest sequence grows), kernels, the picked tokens back.
      upload_inputs(s, s.rows, table_stride_);
      enqueue_step(s);
      read_back_tokens(s);
    } catch (...) {
      cudaStreamEndCapture(stream_, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check_cuda(cudaStreamEndCapture(stream_, &graph), "capturing the decode step");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t instantiated = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check_cuda(instantiated, "instantiating the decode graph for " + std::to_string(s.rows) +
                                 " sequences");
    it = graphs_.emplace(key, exec).first;
  }
  check_cuda(cudaGraphLaunch(it->second, stream_), "launching the decode graph");
}

void DenseDeviceModel::launch_step(const lpx_forward_args& a, int slot,
                                   const std::int32_t* previous) {
  // The engine thread is not the one that loaded the model; the current device is per thread.
  check_cuda(cudaSetDevice(device_.index), "cudaSetDevice");
  check_args(a);
  const int bucket = decode_bucket(a);
  StepShape shape = stage_inputs(a, bucket, slot, previous);
  shape.programs = a.sampling != nullptr && a.n_outputs > 0;
  try {
    if (shape.programs) stage_programs(a, shape);
    if (runs_megakernel(a)) {
      run_megakernel(shape);  // uploads the inputs and reads the token back itself
    } else if (bucket > 0) {
      run_graph(shape);  // uploads the inputs and reads the tokens back itself
    } else {
      upload_inputs(shape, static_cast<int>(a.n_sequences), shape.table_blocks);
      enqueue_step(shape);
      // The picks; a sampled row's output of the step is its token, as a greedy row's.
      if (a.n_outputs > 0 && a.argmax != nullptr) read_back_tokens(shape);
    }
    check_cuda(cudaGetLastError(), "launching the step's kernels");
  } catch (...) {
    recover();
    throw;
  }
}

void DenseDeviceModel::recover() noexcept {
  // Let what was enqueued finish before pinned inputs are written again, and leave the
  // attention counters and argmax keys zero for the next step even if a launch was cut short.
  cudaStreamSynchronize(stream_);
  (void)cudaGetLastError();  // a failed launch's error belongs to this step, not the next
  cudaMemsetAsync(attention_counters_.get(), 0, attention_counters_.bytes(), stream_);
  cudaMemsetAsync(argmax_keys_.get(), 0, argmax_keys_.bytes(), stream_);
  cudaStreamSynchronize(stream_);
}

void DenseDeviceModel::forward(const lpx_forward_args& a) {
  // Nothing is queued (the SDK refuses model_forward otherwise): every slot is free.
  launch_step(a, 0, nullptr);
  const std::size_t logit_count = std::size_t{a.n_outputs} * shape_.n_vocab;
  if (a.n_outputs > 0 && a.logits != nullptr) {
    check_cuda(cudaMemcpyAsync(host_logits_.get(), logits_.get(), logit_count * sizeof(float),
                               cudaMemcpyDeviceToHost, stream_),
               "reading the logits back");
  }
  // The one synchronisation of the step: its results are needed on the host.
  const cudaError_t ran = cudaStreamSynchronize(stream_);
  if (ran != cudaSuccess) recover();
  check_cuda(ran, "running the step");
  if (a.n_outputs > 0 && a.argmax != nullptr) {
    std::memcpy(a.argmax, staging_[0].argmax.get(), a.n_outputs * sizeof(std::int32_t));
  }
  if (a.n_outputs > 0 && a.logits != nullptr) {
    std::memcpy(a.logits, host_logits_.get(), logit_count * sizeof(float));
  }
}

}  // namespace lpx::cuda_backend
