#include "engine/backend.hpp"

#include <utility>

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
      {reinterpret_cast<const void*>(api.attention), "attention"},
  };
  for (const auto& [entry, entry_name] : required) {
    if (entry == nullptr) {
      return unexpected("backend '" + name + "' has no '" + entry_name +
                        "' kernel (it was built for an older LPX ABI; the decode engine needs "
                        "ABI 1.2)");
    }
  }
  return Backend(std::move(instance), &api, name);
}

bool Backend::supports_type(std::int32_t type) const {
  return api_->supports_type(instance_->raw(), type) != 0;
}

void Backend::check(lpx_status* status, const char* op) const {
  if (status == nullptr) return;
  throw EngineError("backend '" + name_ + "': " + op + ": " + take_status_message(status));
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

void Backend::attention(const lpx_attention_args& args) {
  check(api_->attention(instance_->raw(), &args), "attention");
}

}  // namespace lpx::core
