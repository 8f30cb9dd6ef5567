#include "engine/llama_weights.hpp"

#include <cmath>
#include <numbers>
#include <string>

namespace lpx::core {
namespace {

class Resolver {
 public:
  explicit Resolver(const ModelFile& file) : file_(file) {}

  const lpx_tensor_view* required(const std::string& name) {
    const lpx_tensor_view* view = file_.find_tensor(name);
    if (view == nullptr && error_.empty()) error_ = "tensor '" + name + "' is missing";
    return view;
  }
  // A tensor the kernels read as plain floats (norm weights, biases).
  const lpx_tensor_view* required_f32(const std::string& name) {
    const lpx_tensor_view* view = required(name);
    return view ? check_f32(view) : nullptr;
  }
  const float* optional_f32(const std::string& name) {
    const lpx_tensor_view* view = file_.find_tensor(name);
    return view && check_f32(view) ? static_cast<const float*>(view->data) : nullptr;
  }
  const std::string& error() const { return error_; }

 private:
  const lpx_tensor_view* check_f32(const lpx_tensor_view* view) {
    if (view->type != LPX_TENSOR_F32 && error_.empty()) {
      error_ = std::string("tensor '") + view->name + "' must be f32 (norm weights and biases are "
               "read as floats)";
      return nullptr;
    }
    return view;
  }
  const ModelFile& file_;
  std::string error_;
};

// Llama 3's frequency-dependent rope scaling, from the model's metadata, for files that do not
// carry the factors as the rope_freqs tensor.
Expected<std::vector<float>> llama3_factors(const ModelFile& file, const Hyperparameters& h) {
  const std::string p = h.architecture + ".rope.scaling.";
  auto read = [&](const char* key, double fallback) -> Expected<double> {
    return file.has(p + key) ? file.get_float(p + key) : Expected<double>(fallback);
  };
  auto low = read("low_freq_factor", 1.0);
  auto high = read("high_freq_factor", 4.0);
  auto original = read("original_context_length", 8192.0);
  if (!low) return unexpected(low.error());
  if (!high) return unexpected(high.error());
  if (!original) return unexpected(original.error());
  if (!(*high > *low)) {
    return unexpected(p + "high_freq_factor must exceed low_freq_factor");
  }
  std::vector<float> factors(h.n_rot / 2);
  const double low_wavelen = *original / *low;
  const double high_wavelen = *original / *high;
  for (std::size_t i = 0; i < factors.size(); ++i) {
    const double freq = std::pow(h.rope_freq_base, -2.0 * static_cast<double>(i) / h.n_rot);
    const double wavelen = 2.0 * std::numbers::pi / freq;
    double divisor = 1.0;
    if (wavelen > low_wavelen) {
      divisor = h.rope_scaling_factor;
    } else if (wavelen >= high_wavelen) {
      const double smooth = (*original / wavelen - *low) / (*high - *low);
      divisor = 1.0 / ((1.0 - smooth) / h.rope_scaling_factor + smooth);
    }
    factors[i] = static_cast<float>(divisor);
  }
  return factors;
}

}  // namespace

Expected<LlamaWeights> LlamaWeights::resolve(const ModelFile& file, const Hyperparameters& h) {
  Resolver r(file);
  LlamaWeights w;
  w.token_embd = r.required("token_embd.weight");
  w.output_norm = r.required_f32("output_norm.weight");
  w.output = file.find_tensor("output.weight");
  if (w.output == nullptr) w.output = w.token_embd;
  w.layers.reserve(h.n_layer);
  for (std::uint32_t i = 0; i < h.n_layer; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    LlamaLayerWeights l{};
    l.attn_norm = r.required_f32(b + "attn_norm.weight");
    l.wq = r.required(b + "attn_q.weight");
    l.wk = r.required(b + "attn_k.weight");
    l.wv = r.required(b + "attn_v.weight");
    l.wo = r.required(b + "attn_output.weight");
    l.bq = r.optional_f32(b + "attn_q.bias");
    l.bk = r.optional_f32(b + "attn_k.bias");
    l.bv = r.optional_f32(b + "attn_v.bias");
    l.ffn_norm = r.required_f32(b + "ffn_norm.weight");
    l.ffn_gate = r.required(b + "ffn_gate.weight");
    l.ffn_up = r.required(b + "ffn_up.weight");
    l.ffn_down = r.required(b + "ffn_down.weight");
    w.layers.push_back(l);
  }
  if (!r.error().empty()) return unexpected(file.path() + ": " + r.error());

  if (const lpx_tensor_view* freqs = file.find_tensor("rope_freqs.weight")) {
    if (freqs->type != LPX_TENSOR_F32) {
      return unexpected(file.path() + ": tensor 'rope_freqs.weight' must be f32");
    }
    const auto* data = static_cast<const float*>(freqs->data);
    w.rope_freq_factors.assign(data, data + h.n_rot / 2);
  } else if (h.rope_scaling == RopeScaling::llama3) {
    auto factors = llama3_factors(file, h);
    if (!factors) return unexpected(file.path() + ": " + factors.error());
    w.rope_freq_factors = std::move(*factors);
  }
  return w;
}

}  // namespace lpx::core
