// DenseDeviceModel's persistent decode kernel (decode_megakernel.cu), when the backend option
// `megakernel` asks for it: batch-1 greedy decode steps as one cooperative launch instead of
// the step's graph. The kernel runs the graph path's kernels' thread blocks as work items, on
// the same buffers with the same arguments (the builders below are the launched path's), so
// the logits are the same bits; gpu-check measures which is faster.
#include <lpx/cpp/status.hpp>

#include "cuda_check.hpp"
#include "dense_device_model.hpp"

namespace lpx::cuda_backend {
namespace {

namespace k = kernels::cuda;

[[noreturn]] void refuse(const std::string& why) {
  throw lpx::Error(LPX_ERR_UNSUPPORTED, "megakernel = true: " + why +
                                            " (run without the option: the CUDA graphs run it)");
}

}  // namespace

k::MegakernelStep DenseDeviceModel::megakernel_step() const {
  k::MegakernelStep step;
  step.token_embd = weights_.token_embd;
  step.tokens = tokens_;
  step.previous_picks = argmax_.get();
  step.x = x_.get();
  step.head = {weights_.output, k::GemvInput{x_.get(), weights_.output_norm, shape_.rms_norm_eps},
               head_output(true)};
  step.picked = argmax_.get();
  step.n_layers = static_cast<int>(weights_.layers.size());
  return step;
}

std::vector<k::MegakernelLayer> DenseDeviceModel::megakernel_layers() const {
  std::vector<k::MegakernelLayer> layers;
  const float eps = shape_.rms_norm_eps;
  for (std::size_t i = 0; i < weights_.layers.size(); ++i) {
    const DeviceLayer& layer = weights_.layers[i];
    const int index = static_cast<int>(i);
    k::MegakernelLayer l;
    l.qkv = {layer.wqkv, k::GemvInput{x_.get(), layer.attn_norm, eps}, qkv_output(layer)};
    l.o = {layer.wo, k::GemvInput{attn_.get()},
           k::single_gemv_output(x_.get(), layer.wo.rows, nullptr, k::GemvStore::kAccumulate)};
    l.gate_up = {layer.ffn_gate_up, k::GemvInput{x_.get(), layer.ffn_norm, eps},
                 gate_up_output()};
    l.down = {layer.ffn_down, k::GemvInput{ffn_.get()},
              k::single_gemv_output(x_.get(), layer.ffn_down.rows, nullptr,
                                    k::GemvStore::kAccumulate)};
    l.rope = rope_store_args(1, index);
    l.rope_args = ropes_[i];
    l.attention = attention_args(index, 0, 1);
    layers.push_back(l);
  }
  return layers;
}

void DenseDeviceModel::prepare_megakernel() {
  // What the launched path does with kernels of its own (or matrices apart) the persistent
  // kernel does not do: every such reason, in one message.
  std::string reasons;
  const auto add = [&](const std::string& reason) {
    reasons += (reasons.empty() ? "" : "; ") + reason;
  };
  if (shape_.embedding_scale != 1.0f) add("an embedding scale");
  if (shape_.residual_scale != 1.0f) add("a residual scale");
  const std::size_t model_reasons = reasons.size();
  for (std::size_t i = 0; i < weights_.layers.size(); ++i) {
    const DeviceLayer& layer = weights_.layers[i];
    const std::string at = "layer " + std::to_string(i) + ": ";
    if (layer.post_attention_norm != nullptr || layer.post_ffn_norm != nullptr) {
      add(at + "post-norms");
    }
    if (layer.wqkv.rows == 0) add(at + "q, k and v of different types (not stacked)");
    if (layer.ffn_gate_up.rows == 0) add(at + "gate and up not interleaved");
    if (reasons.size() > model_reasons) break;  // the first layer that has any says enough
  }
  if (!reasons.empty()) refuse(reasons);
  int cooperative = 0;
  check_cuda(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device_.index),
             "cudaDeviceGetAttribute");
  if (cooperative == 0) refuse(device_name_ + " has no cooperative launch");
  megakernel_step_ = megakernel_step();  // every pointer fixed: built once, used every step
  const std::vector<k::MegakernelLayer> layers = megakernel_layers();
  const std::string why = k::megakernel_unsupported(megakernel_step_, layers);
  if (!why.empty()) refuse(why);
  megakernel_plan_ = DeviceArray<std::uint8_t>(k::megakernel_plan_bytes(layers.size()),
                                               "the persistent kernel's plan");
  megakernel_launch_ = k::megakernel_prepare(megakernel_step_, layers, megakernel_plan_.get(),
                                             device_.multiprocessors, stream_);
  check_cuda(megakernel_launch_.status, "preparing the persistent decode kernel");
  if (megakernel_launch_.grid <= 0) refuse("its blocks do not fit on " + device_name_);
}

bool DenseDeviceModel::runs_megakernel(const lpx_forward_args& a) const noexcept {
  return use_megakernel_ && a.n_rows == 1 && a.n_sequences == 1 && a.n_outputs == 1 &&
         a.sampling == nullptr;
}

void DenseDeviceModel::run_megakernel(const StepShape& shape) {
  upload_inputs(shape, 1, shape.table_blocks);
  check_cuda(k::decode_megakernel(megakernel_step_, megakernel_plan_.get(), megakernel_launch_,
                                  stream_),
             "launching the persistent decode kernel (" +
                 std::to_string(megakernel_launch_.grid) + " blocks)");
  read_back_tokens(shape);
}

}  // namespace lpx::cuda_backend
