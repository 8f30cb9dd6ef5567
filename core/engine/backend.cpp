#include "engine/backend.hpp"

#include <utility>

#include "lpx/cpp/model_features.hpp"

namespace lpx::core {

Expected<Backend> Backend::adopt(std::shared_ptr<PluginInstance> instance) {
  const std::string name = instance->library().description().name;
  const auto& api = instance->api<lpx_quant_backend_api>();
  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(api.matmul), "matmul"},
      {reinterpret_cast<const void*>(api.dequantize_row), "dequantize_row"},
      {reinterpret_cast<const void*>(api.reserve), "reserve"},
      {reinterpret_cast<const void*>(api.rms_norm), "rms_norm"},
      {reinterpret_cast<const void*>(api.rope), "rope"},
      {reinterpret_cast<const void*>(api.swiglu), "swiglu"},
      {reinterpret_cast<const void*>(api.geglu), "geglu"},
      {reinterpret_cast<const void*>(api.attention), "attention"},
      {reinterpret_cast<const void*>(api.model_features), "model_features"},
  };
  const bool device_entries[] = {api.model_load != nullptr, api.model_forward != nullptr,
                                 api.model_free != nullptr};
  if (!(device_entries[0] == device_entries[1] && device_entries[1] == device_entries[2])) {
    return invalid_argument("backend '" + name +
                      "' has some but not all of model_load, model_forward and model_free");
  }
  if ((api.model_enqueue == nullptr) != (api.model_wait == nullptr) ||
      (api.model_enqueue != nullptr && !device_entries[0])) {
    return invalid_argument("backend '" + name +
                            "' has model_enqueue and model_wait only as a pair, beside "
                            "model_load, model_forward and model_free");
  }
  for (const auto& [entry, entry_name] : required) {
    if (entry == nullptr) {
      return invalid_argument("backend '" + name + "' lacks the required entry '" + entry_name + "'");
    }
  }
  return Backend(std::move(instance), &api, name);
}

bool Backend::has_queued_steps() const {
  return api_->model_enqueue != nullptr && instance_->library().supports("queued-steps");
}

bool Backend::has_device_sampling() const {
  return has_device_models() && instance_->library().supports("device-sampling");
}

bool Backend::supports_type(std::int32_t type) const {
  return api_->supports_type(instance_->raw(), type) != 0;
}

void Backend::check(lpx_status* status, const char* op) const {
  if (status == nullptr) return;
  const Status failure = take_status(status);
  throw EngineError("backend '" + name_ + "': " + op + ": " + failure.message, failure.code);
}

void Backend::reserve(const lpx_backend_limits& limits) {
  check(api_->reserve(instance_->raw(), &limits), "reserve");
}

void Backend::matmul(const lpx_tensor_view& weight, const float* x, float* y, std::size_t rows) {
  if (lpx_status* status = api_->matmul(instance_->raw(), &weight, x, y, rows)) {
    check(status, weight.name);
  }
}

void Backend::dequantize_row(const lpx_tensor_view& weight, std::int64_t row, float* out) {
  if (lpx_status* status = api_->dequantize_row(instance_->raw(), &weight, row, out)) {
    check(status, weight.name);
  }
}

void Backend::rms_norm(const float* x, const float* weight, float* out, std::size_t rows,
                       std::size_t n, float eps) {
  check(api_->rms_norm(instance_->raw(), x, weight, out, rows, n, eps), "rms_norm");
}

void Backend::rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
                   const std::int32_t* positions, const lpx_rope_params& params) {
  check(api_->rope(instance_->raw(), x, rows, heads, head_dim, positions, &params), "rope");
}

void Backend::swiglu(const float* gate, const float* up, float* out, std::size_t n) {
  check(api_->swiglu(instance_->raw(), gate, up, out, n), "swiglu");
}

void Backend::geglu(const float* gate, const float* up, float* out, std::size_t n) {
  check(api_->geglu(instance_->raw(), gate, up, out, n), "geglu");
}

std::uint64_t Backend::model_features() const { return api_->model_features(instance_->raw()); }

Expected<bool> Backend::check_features(const lpx_transformer_desc& model) const {
  const std::uint64_t runs = model_features();
  const std::uint64_t missing = model.features & ~runs;
  if (missing == 0) return true;
  const std::uint64_t has = runs & LPX_MODEL_FEATURES_2_0;
  return unsupported("backend '" + name_ + "' cannot run this " +
                    (model.architecture != nullptr ? model.architecture : "model") +
                    " model: it lacks " + model_feature_names(missing) + " (it runs " +
                    (has != 0 ? model_feature_names(has) : "plain Llama-style layers only") +
                    "); choose another backend, e.g. --device cpu");
}

void Backend::attention(const lpx_attention_args& args) {
  check(api_->attention(instance_->raw(), &args), "attention");
}

lpx_device_model* Backend::load_model(const lpx_transformer_desc& desc,
                                      lpx_device_model_info& info) {
  lpx_device_model* model = nullptr;
  info = {};
  info.struct_size = sizeof(lpx_device_model_info);
  check(api_->model_load(instance_->raw(), &desc, &model, &info), "model_load");
  if (model == nullptr) throw EngineError("backend '" + name_ + "': model_load returned no model");
  return model;
}

void Backend::forward(lpx_device_model* model, const lpx_forward_args& args) {
  check(api_->model_forward(instance_->raw(), model, &args), "forward");
}

void Backend::enqueue(lpx_device_model* model, const lpx_forward_args& args) {
  check(api_->model_enqueue(instance_->raw(), model, &args), "enqueue");
}

void Backend::wait(lpx_device_model* model) {
  check(api_->model_wait(instance_->raw(), model), "step");
}

void Backend::free_model(lpx_device_model* model) noexcept {
  if (model != nullptr) api_->model_free(instance_->raw(), model);
}

}  // namespace lpx::core
