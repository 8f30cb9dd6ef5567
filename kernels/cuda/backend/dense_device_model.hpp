// A model (dense_model.hpp) resident on one GPU: its weights, its paged KV pools and every
// activation buffer of a step, allocated once at load. forward() runs one engine step:
// copy the step's inputs (token ids, positions, KV slots, block tables) to the device in two
// copies, run every layer's kernels on one stream, copy the logits (or the token ids picked
// on the device: greedy, or each row's sampling program) back, and synchronise once. enqueue()
// and wait() split a token-ids step in two (queued steps, dense_device_queue.cpp), so the next
// step is launched before this one's picks are read.
//
// Per layer, at decode sizes, six launches:
//   q, k, v     one GEMV over the stacked matrices, reading the residual stream x normalised
//               on the fly (attn_norm) and adding the biases;
//   the q/k norms and RoPE of q and k (each where the layer has them), and k, v into the
//               paged f16 KV cache, in one kernel;
//   attention   split-K flash-decoding over the layer's window (a fixed number of splits per
//               row, enough to fill the GPU at batch 1), merged by the last chunk to finish;
//   output      GEMV whose products are added to x (the residual add);
//   gate, up    one GEMV over the interleaved matrices, reading x normalised (ffn_norm) and
//               storing SwiGLU (or GeGLU) of each gate/up pair;
//   down        GEMV added to x.
// A layer with post-norms (Gemma) or a model with a residual scale (Granite) writes the output
// and down products apart instead, and one more kernel per block adds them to x, normalised
// and scaled. The embedding scale is one element-wise kernel where the model has it. The
// output head is one GEMV over x itself (a pure decode step outputs every row in order; other
// steps gather the output rows first) that applies the logit scale and final soft cap and, for
// greedy rows, keeps each row's argmax as a 64-bit atomic maximum; a one-block kernel
// (argmax_finish) then writes the tokens. Sampling programs run one block per row instead.
// A greedy decode step of a Llama-shaped model is thus 6L + 3 kernels (the embedding, six per
// layer, the head and argmax_finish), every one after the embedding a dependent launch.
// Prefill-sized steps run the same sequence with the norm, the residual add and SwiGLU as
// separate kernels around cuBLAS (DeviceMatmul); matrices that could not be stacked
// (DeviceWeights) run one by one.
//
// Pure decode steps (one row per sequence) run as CUDA graphs, one per batch-size bucket (1, 2,
// 4, ... up to max_sequences, at most DeviceMatmul::kGemvRows: larger batches take cuBLAS, which
// is not captured) and way of picking (argmax or sampling programs), captured on first use. A
// graph is the whole step: the staged inputs go up, the kernels run, the picked tokens come
// back; the host stages, launches it and synchronises once. Padding rows write to a sink KV
// block no sequence owns, and attention's grid does not depend on positions (split-K, a fixed
// split count per model), so one graph serves every step of its bucket. Prefill and mixed steps launch the same kernels directly.
//
// Threading: one engine thread at a time (the plugin's contract).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <lpx/cpp/plugin.hpp>

#include "cuda/launch.hpp"

#include "cuda_device.hpp"
#include "device_matmul.hpp"
#include "device_memory.hpp"
#include "device_weights.hpp"
#include "model_plan.hpp"

namespace lpx::cuda_backend {

class DenseDeviceModel final : public lpx::DeviceModel {
 public:
  // use_megakernel: batch-1 greedy decode steps run as one persistent kernel
  // (decode_megakernel.cu); throws lpx::Error (LPX_ERR_UNSUPPORTED), saying why, for a model
  // it is not built for.
  DenseDeviceModel(const CudaDevice& device, const DenseModel& desc, bool use_graphs,
                   bool use_megakernel = false);
  ~DenseDeviceModel() override;

  void forward(const lpx_forward_args& args) override;
  // Queued steps (ABI 2.8; dense_device_queue.cpp): a step is launched and returns; its picks
  // reach the host in the wait that completes it. A row taking the previous step's pick reads
  // it from argmax_ on the device, where that step left it.
  void enqueue(const lpx_forward_args& args) override;
  void wait() override;
  void describe(lpx_device_model_info& info) const;

 private:
  struct StepShape {
    int slot = 0;           // the host staging area (staging_) it goes through
    int rows = 0;           // rows the kernels run on (the bucket, for graphs)
    int outputs = 0;        // rows whose logits come out
    int table_blocks = 0;   // blocks of the longest sequence's table
    bool programs = false;  // the output rows' tokens come from sampling programs
    bool outputs_are_rows = false;  // output row i is row i, for every row: no gather
  };
  // Stages args into slot `slot`'s pinned inputs; returns the shape to run. `bucket` > 0 pads
  // a pure decode step to that many rows. `previous` (previous_outputs, or NULL): such rows'
  // tokens are staged as -(o + 1), which the embedding reads as argmax_[o].
  StepShape stage_inputs(const lpx_forward_args& args, int bucket, int slot,
                         const std::int32_t* previous);
  // Stages and launches the whole step through staging slot `slot`, its picks copied back
  // there. On a failure, leaves the stream idle and the counters clear.
  void launch_step(const lpx_forward_args& args, int slot, const std::int32_t* previous);
  // After a failure: what was enqueued finished, the last error taken, counters and keys zero.
  void recover() noexcept;
  // Copies the staged inputs up: the five row arrays, `table_width` entries of the first
  // `sequences` block-table rows, and the sampling programs of a shape that has them.
  void upload_inputs(const StepShape& shape, int sequences, int table_width);
  void read_back_tokens(const StepShape& shape);  // the picked tokens into its slot
  void enqueue_step(const StepShape& shape);  // every kernel of the step, on stream_
  void attention_block(const StepShape& shape, const DeviceLayer& layer, int index);
  void feed_forward_block(const StepShape& shape, const DeviceLayer& layer);
  // Runs w over `in` for the rows of the step, its products joining the residual stream x:
  // added by the GEMV itself, or (with a post-norm or a residual scale) through proj_.
  void add_to_residual(const StepShape& s, const kernels::cuda::DeviceWeight& w,
                       const float* in, const float* post_norm);
  int decode_bucket(const lpx_forward_args& args) const noexcept;
  // The persistent kernel's description of this model's step (its buffers, its layers).
  kernels::cuda::MegakernelStep megakernel_step() const;
  std::vector<kernels::cuda::MegakernelLayer> megakernel_layers() const;
  void prepare_megakernel();  // at load; throws when the model is not one it runs
  bool runs_megakernel(const lpx_forward_args& args) const noexcept;
  void run_megakernel(const StepShape& shape);
  // Layer `index`'s kernel arguments, shared by the launched step and the persistent kernel:
  // q/k/v's outputs, rope_and_store's for `rows` rows, attention's for rows [first, first +
  // rows).
  kernels::cuda::GemvOutput qkv_output(const DeviceLayer& layer) const;
  kernels::cuda::GemvOutput gate_up_output() const;  // interleaved gate/up: the pairs' store
  kernels::cuda::GemvOutput head_output(bool fused_argmax) const;
  kernels::cuda::RopeStoreArgs rope_store_args(int rows, int index) const;
  kernels::cuda::AttentionArgs attention_args(int index, int first, int rows) const;
  void run_graph(const StepShape& shape);
  void stage_programs(const lpx_forward_args& args, const StepShape& shape);  // its slot
  void check_args(const lpx_forward_args& args) const;

  CudaDevice device_;
  DenseModel shape_;  // hyperparameters only: its tensor pointers are cleared at load
  std::string device_name_;
  int q_width_, kv_width_, table_stride_, sink_slot_;
  bool use_graphs_;

  DeviceWeights weights_;
  std::vector<kernels::cuda::RopeArgs> ropes_;  // per layer (n_rot 0: none), device factors
  std::vector<int> windows_;                    // per layer: attended positions, 0 all
  int kv_window_ = 0;  // the widest window when every layer has one (else 0): how far back
                       // rows read, so the block-table entries before it may be given back
  CudaStream stream_owner_;  // before everything that enqueues on it: destroyed after them
  cudaStream_t stream_;
  DeviceArray<std::uint16_t> kv_;  // per layer: K pool then V pool, each (kv_blocks + 1) blocks
  std::size_t pool_elements_;      // f16 values per pool
  std::unique_ptr<DeviceMatmul> matmul_;

  // Step inputs. Host and device share one layout: five int32 arrays of max_rows (tokens,
  // positions, slots, row_sequence, output_rows) then the block tables, (max_sequences + 1) x
  // table_stride (the last row belongs to the padding rows and points at the sink block).
  int max_rows_, max_sequences_;
  DeviceArray<std::int32_t> inputs_;
  std::int32_t* tokens_ = nullptr;  // device views into inputs_
  std::int32_t* positions_ = nullptr;
  std::int32_t* slots_ = nullptr;
  std::int32_t* row_sequence_ = nullptr;
  std::int32_t* output_rows_ = nullptr;
  std::int32_t* block_tables_ = nullptr;

  // Activations, max_rows rows each (output-side ones max_sequences rows): x_ the residual
  // stream, ffn_ the SwiGLU of gate and up (up_ only for gate/up matrices not interleaved),
  // proj_ a block's output on its way to x (only for models that add it by its own kernel).
  DeviceArray<float> x_, q_, k_, v_, attn_, ffn_, up_, proj_;
  DeviceArray<float> head_in_, logits_;
  DeviceArray<float> attention_partial_;
  DeviceArray<std::uint32_t> attention_counters_;  // attention_rows_ x n_head_kv, left zero
  DeviceArray<std::int32_t> argmax_;          // the picked tokens, argmax or programs
  DeviceArray<unsigned long long> argmax_keys_;  // the head GEMV's fused argmax, left zero
  DeviceArray<lpx_sampling_program> programs_;  // max_sequences: one per output row
  PinnedArray<float> host_logits_;
  // A step's host side: its staged inputs (the layout of inputs_) and programs, its picks, and
  // the event after its last copy. Two, so that a step is staged while the one before it runs;
  // a slot is staged again only once its step is complete (two queued at most).
  struct Staging {
    PinnedArray<std::int32_t> inputs;
    PinnedArray<lpx_sampling_program> programs;
    PinnedArray<std::int32_t> argmax;
    CudaEvent done;
  };
  std::array<Staging, 2> staging_;
  // Queued steps: where the picks go, how many; doomed once a step queued before it failed.
  // A ring of two by staging slot (the SDK lets no more be queued): the oldest is at
  // oldest_slot_, and the next is staged at (oldest_slot_ + queued_count_) % 2.
  struct QueuedStep {
    std::int32_t* argmax = nullptr;
    std::uint32_t outputs = 0;
    bool doomed = false;
  };
  std::array<QueuedStep, 2> queued_{};
  int oldest_slot_ = 0;
  int queued_count_ = 0;
  int attention_rows_;    // query rows per attention launch (bounds the partial scratch)
  int attention_splits_;  // chunks a row's positions are cut into (attention_splits)

  // (bucket, programs, slot) -> the step; a graph reads and writes its slot's pinned memory.
  std::map<std::tuple<int, bool, int>, cudaGraphExec_t> graphs_;

  // The persistent kernel, when asked for: its step's arguments, its plan (device), its launch.
  bool use_megakernel_;
  kernels::cuda::MegakernelStep megakernel_step_;
  DeviceArray<std::uint8_t> megakernel_plan_;
  kernels::cuda::MegakernelLaunch megakernel_launch_;
};

}  // namespace lpx::cuda_backend
