// cpu-scalar: the portable CPU backend. Every kernel is the scalar reference of kernels/reference
// (matmul: activations rounded to the weight type's dot format, then exact block dot products;
// or, with `activations = "f32"`, f32 activations against exactly dequantized weights; or, with
// "i16", 16-bit activation blocks for the 32-element and Q4_K/Q5_K/Q6_K weight types), on the
// calling thread: no SIMD, no threads, correct on any CPU. It is the baseline the
// vectorised `cpu` backend is tested against (their results are bit-identical), and proves that
// backends swap by editing one line of a pipeline file.
#include <lpx/cpp/plugin.hpp>
#include <vector>

#include "cpu/backend_support.hpp"
#include "reference/matmul.hpp"
#include "reference/matmul_f32.hpp"
#include "reference/ops.hpp"
#include "reference/quantize_activations.hpp"

namespace {

namespace cpu = lpx::kernels::cpu;
namespace reference = lpx::kernels::reference;

class ScalarBackend final : public lpx::QuantBackend {
 public:
  explicit ScalarBackend(const lpx::Options& options)
      : activations_mode_(cpu::activations_of(options)) {}

  bool supports_type(std::int32_t type) const noexcept override {
    return reference::is_valid_tensor_type(type);
  }

  void reserve(const lpx_backend_limits& limits) override {
    cpu::check_limits(limits);
    if (activations_mode_ != cpu::Activations::f32) {
      grow(activations_, cpu::activation_capacity(limits.max_rows, limits.max_columns));
    }
    grow(scratch_, reference::attention_scratch_floats(limits.max_context));
  }

  void matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch) override {
    const cpu::WeightLayout l = cpu::layout_of(w);
    if (batch == 0) return;
    if (cpu::runs_f32(activations_mode_, w.type)) {
      reference::dot_rows_f32({w.type, w.data, l.row_bytes, l.rows, l.columns, x, batch, y}, 0,
                              l.rows);
      return;
    }
    if (activations_mode_ == cpu::Activations::i16) {
      grow(activations_, reference::i16_row_bytes(l.columns) * batch);
      reference::quantize_activations_i16(w.type, x, l.columns, batch, activations_.data());
      reference::dot_rows_i16({w.type, w.data, l.row_bytes, l.rows, l.columns, activations_.data(), batch, y}, 0,
                              l.rows);
      return;
    }
    grow(activations_, reference::activation_row_bytes(w.type, l.columns) * batch);
    reference::quantize_activations(w.type, x, l.columns, batch, activations_.data());
    reference::dot_rows(
        {w.type, w.data, l.row_bytes, l.rows, l.columns, activations_.data(), batch, y}, 0, l.rows);
  }

  void dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out) override {
    cpu::dequantize_weight_row(w, row, out);
  }

  void rms_norm(const float* x, const float* weight, float* out, std::size_t rows, std::size_t n,
                float eps) override {
    for (std::size_t r = 0; r < rows; ++r) {
      reference::rms_norm_row(x + r * n, weight, out + r * n, n, eps);
    }
  }

  void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
            const std::int32_t* positions, const lpx_rope_params& params) override {
    cpu::check_rope(params, head_dim);
    for (std::size_t r = 0; r < rows; ++r) {
      reference::rope_row(x + r * heads * head_dim, heads, head_dim, positions[r], params);
    }
  }

  void swiglu(const float* gate, const float* up, float* out, std::size_t n) override {
    reference::swiglu(gate, up, out, n);
  }

  void geglu(const float* gate, const float* up, float* out, std::size_t n) override {
    // q8 activations are llama.cpp's arithmetic, whose GELU is f16-rounded.
    if (activations_mode_ != cpu::Activations::q8) {
      reference::geglu_approx(gate, up, out, n);
    } else {
      reference::geglu_f16(gate, up, out, n);
    }
  }

  // Every kernel honours every argument of ABI 2.0: the core runs any description on it.
  std::uint64_t model_features() const noexcept override { return LPX_MODEL_FEATURES_2_0; }

  void attention(const lpx_attention_args& a) override {
    const std::int64_t max_position = cpu::check_attention(a);
    if (max_position < 0) return;
    grow(scratch_,
         reference::attention_scratch_floats(static_cast<std::uint32_t>(max_position) + 1));
    for (std::uint32_t row = 0; row < a.n_rows; ++row) {
      reference::attention_row(a, row, 0, a.n_heads, scratch_.data());
    }
  }

 private:
  // Buffers only grow: reserve() sizes them for the engine's limits, so kernel calls within
  // those limits never allocate.
  template <class T>
  static void grow(std::vector<T>& buffer, std::size_t size) {
    if (buffer.size() < size) buffer.resize(size);
  }

  const cpu::Activations activations_mode_;  // the `activations` option
  std::vector<std::uint8_t> activations_;  // q8, i16: the rounded x of the current matmul
  std::vector<float> scratch_;             // attention scratch
};

constexpr lpx_option_spec kOptions[] = {cpu::kActivationsOption};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<ScalarBackend>(
      {.name = "cpu-scalar",
       .version = "1.3.0",
       .license = "Apache-2.0",
       .description = "Portable scalar CPU kernels (the reference backend; any CPU)",
       .options = kOptions,
       .capabilities = cpu::kCapabilities});
}
