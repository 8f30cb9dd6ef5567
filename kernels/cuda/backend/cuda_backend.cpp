// cuda: the GPU backend. The engine hands it the whole model (ABI 1.4 model_load): weights,
// the paged KV cache and every activation stay in device memory, and each engine step is one
// model_forward: a CUDA graph per decode batch size, quantized GEMV kernels for decode,
// cuBLAS SGEMM for prefill, flash-decoding attention over the paged cache, and only the logits (or
// the greedy token ids) crossing back; decode steps are queued one behind the other (ABI 2.8
// model_enqueue), their tokens taken on the device. See kernels/cuda/launch.hpp for the kernels and
// docs/cuda.md for the design and its numbers.
//
// Creating an instance opens the GPU (option `gpu`) and fails, saying why, when CUDA is not
// usable: there is no silent CPU fallback.
//
// Arithmetic: the f32-activation contract of lpx/kinds/quant_backend.h (weights dequantized
// exactly, f32 activations and accumulation; f16 KV cache), up to summation order, in decode
// (GEMV) and prefill (dequantize to f32 + cuBLAS SGEMM) alike.
#include <lpx/cpp/plugin.hpp>

#include <memory>
#include <string>

#include "cuda/launch.hpp"
#include "cuda_check.hpp"
#include "cuda_device.hpp"
#include "host_ops.hpp"
#include "dense_device_model.hpp"

namespace {

namespace cb = lpx::cuda_backend;

class CudaBackend final : public lpx::DeviceBackend {
 public:
  explicit CudaBackend(const lpx::Options& options)
      : device_(cb::open_cuda_device(static_cast<int>(options.get_int("gpu")))),
        use_graphs_(options.get_bool("graphs")),
        use_megakernel_(options.get_bool("megakernel")) {
    // Process-wide (launch.hpp): the last backend created decides.
    const bool overlap = lpx::kernels::cuda::set_kernel_overlap(options.get_bool("overlap"));
    lpx::log_info("cuda backend on " + device_.describe() +
                  (use_graphs_ ? "" : "; CUDA graphs off") +
                  (use_megakernel_ ? "; batch-1 steps as one persistent kernel" : "") +
                  (overlap ? "; kernels overlap (programmatic dependent launch)" : ""));
  }

  bool supports_type(std::int32_t type) const noexcept override {
    return lpx::kernels::cuda::gemv_supports(type);
  }

  std::uint64_t model_features() const noexcept override { return cb::kCudaFeatures; }

  std::unique_ptr<lpx::DeviceModel> load_model(const lpx_transformer_desc& description,
                                               lpx_device_model_info& info) override {
    // Refused before anything is allocated when the kernels cannot run it.
    const cb::DenseModel desc = cb::dense_model(description);
    // The engine may call from another thread than the one that opened the device.
    cb::check_cuda(cudaSetDevice(device_.index), "cudaSetDevice");
    check_fits(cb::plan_memory(desc), desc);
    auto model =
        std::make_unique<cb::DenseDeviceModel>(device_, desc, use_graphs_, use_megakernel_);
    model->describe(info);
    return model;
  }

  // The per-op entries: host buffers staged through the GPU (see host_ops.hpp).
  void reserve(const lpx_backend_limits&) override {}
  void matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch) override {
    ops().matmul(w, x, y, batch);
  }
  void dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out) override {
    ops().dequantize_row(w, row, out);
  }
  void rms_norm(const float* x, const float* weight, float* out, std::size_t rows, std::size_t n,
                float eps) override {
    ops().rms_norm(x, weight, out, rows, n, eps);
  }
  void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
            const std::int32_t* positions, const lpx_rope_params& params) override {
    ops().rope(x, rows, heads, head_dim, positions, params);
  }
  void swiglu(const float* gate, const float* up, float* out, std::size_t n) override {
    ops().swiglu(gate, up, out, n);
  }
  void geglu(const float* gate, const float* up, float* out, std::size_t n) override {
    ops().geglu(gate, up, out, n);
  }
  void attention(const lpx_attention_args& args) override { ops().attention(args); }

 private:
  // Refuses, with the numbers, a model that cannot fit in the GPU's free memory.
  void check_fits(const cb::MemoryPlan& plan,
                  const cb::DenseModel& desc) const {
    std::size_t free = 0;
    std::size_t total = 0;
    cb::check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    if (plan.total() <= free) return;
    auto mib = [](std::size_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; };
    throw lpx::Error(
        LPX_ERR_OUT_OF_MEMORY,
        "the model needs about " + mib(plan.total()) + " on " + device_.describe() +
            " (weights " + mib(plan.weights) + ", KV cache " + mib(plan.kv_cache) + " for " +
            std::to_string(std::size_t{desc.kv_blocks} * desc.kv_block_size) + " tokens, workspace " +
            mib(plan.workspace) + ") but " + mib(free) +
            " are free; lower kv_cache_tokens, context_size or max_sequences, or use a smaller "
            "model");
  }

  cb::HostOps& ops() {
    cb::check_cuda(cudaSetDevice(device_.index), "cudaSetDevice");
    if (!ops_) ops_ = std::make_unique<cb::HostOps>();
    return *ops_;
  }

  cb::CudaDevice device_;
  bool use_graphs_;
  bool use_megakernel_;
  std::unique_ptr<cb::HostOps> ops_;
};

constexpr lpx_option_spec kOptions[] = {
    lpx::in_range(lpx::option("gpu", LPX_OPTION_INT, "0", "GPU index: cuda:N is gpu = N"), 0, 1024),
    lpx::option("graphs", LPX_OPTION_BOOL, "true",
                "Run decode steps as CUDA graphs (one per batch-size bucket)"),
    lpx::option("megakernel", LPX_OPTION_BOOL, "false",
                "Run batch-1 greedy decode steps as one persistent kernel (an experiment "
                "measured against the graphs; refused, saying why, where it is not built for "
                "the model)"),
    lpx::option("overlap", LPX_OPTION_BOOL, "true",
                "Let each decode kernel start while the previous one finishes (programmatic "
                "dependent launch; compute capability 9.0 and newer)"),
    // Stated, not chosen: the GPU kernels compute with f32 activations. Declared so a pipeline
    // with `device = "auto"` and `activations = "f32"` validates on either backend.
    lpx::one_of(lpx::option("activations", LPX_OPTION_STRING, "\"f32\"",
                            "Activation precision in matmuls: f32 (the only one on the GPU)"),
                "f32"),
};

constexpr const char* kCapabilities[] = {"device-models", "device-sampling", "queued-steps",
                                         "f32-activations", "cuda-graphs"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<CudaBackend>(
      {.name = "cuda",
       .version = "0.1.0",
       .license = "Apache-2.0",
       .description = "NVIDIA GPUs: the whole decode step on the device (GEMV, cuBLAS prefill, "
                      "paged flash-decoding attention, CUDA graphs)",
       .options = kOptions,
       .capabilities = kCapabilities});
}
