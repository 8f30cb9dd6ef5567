// The engine's handle on a quantization-backend plugin instance: the kernels of one device,
// called through the C ABI. Each call throws EngineError with the backend's message on failure,
// so the forward pass reads as a sequence of kernel calls.
//
// Threading: like the plugin instance, driven by one engine thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/engine_error.hpp"
#include "lpx/kinds/quant_backend.h"
#include "model/transformer_model.hpp"
#include "plugin_host/plugin_library.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class Backend {
 public:
  // Wraps `instance`, which must be a quant_backend whose table has every required 2.0 entry;
  // otherwise says which entry is missing.
  static Expected<Backend> adopt(std::shared_ptr<PluginInstance> instance);

  const std::string& name() const noexcept { return name_; }
  bool supports_type(std::int32_t type) const;

  void reserve(const lpx_backend_limits& limits);
  void matmul(const lpx_tensor_view& weight, const float* x, float* y, std::size_t rows);
  void dequantize_row(const lpx_tensor_view& weight, std::int64_t row, float* out);
  void rms_norm(const float* x, const float* weight, float* out, std::size_t rows, std::size_t n,
                float eps);
  void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
            const std::int32_t* positions, const lpx_rope_params& params);
  void swiglu(const float* gate, const float* up, float* out, std::size_t n);
  void geglu(const float* gate, const float* up, float* out, std::size_t n);
  void attention(const lpx_attention_args& args);

  // The lpx_model_feature bits the backend runs.
  std::uint64_t model_features() const;
  // Whether the backend runs every feature `model` needs; if not, the error names the missing
  // ones. Called before anything is loaded or allocated for the model.
  Expected<bool> check_features(const lpx_transformer_desc& model) const;

  // Whether the backend keeps models on its own device (model_load & co).
  bool has_device_models() const noexcept { return api_->model_load != nullptr; }
  // Whether model_forward runs sampling programs (capability "device-sampling").
  bool has_device_sampling() const;
  // The model on the device; throws EngineError with the backend's reason (out of memory...).
  lpx_device_model* load_model(const lpx_transformer_desc& desc, lpx_device_model_info& info);
  void forward(lpx_device_model* model, const lpx_forward_args& args);
  // Queued steps (ABI 2.8): whether the backend has them and says they overlap (capability
  // "queued-steps": model_enqueue returns before the step has run), and the two calls.
  bool has_queued_steps() const;
  void enqueue(lpx_device_model* model, const lpx_forward_args& args);
  void wait(lpx_device_model* model);
  void free_model(lpx_device_model* model) noexcept;

 private:
  Backend(std::shared_ptr<PluginInstance> instance, const lpx_quant_backend_api* api,
          std::string name)
      : instance_(std::move(instance)), api_(api), name_(std::move(name)) {}
  // Throws EngineError("backend 'NAME': OP: message") when `status` is an error.
  void check(lpx_status* status, const char* op) const;

  std::shared_ptr<PluginInstance> instance_;
  const lpx_quant_backend_api* api_;
  std::string name_;
};

}  // namespace lpx::core
