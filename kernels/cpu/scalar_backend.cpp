// cpu-scalar: the portable CPU backend. Each weight row is dequantized with the reference
// dequantizer and multiplied in plain C++: no SIMD, no threads, correct on any CPU. It is the
// baseline the vectorised `cpu` backend is measured and tested against, and proves that backends
// swap by editing one line of a pipeline file.
#include <vector>

#include <lpx/cpp/plugin.hpp>

#include "reference/dequantize.hpp"
#include "reference/tensor_types.hpp"

namespace {

namespace reference = lpx::kernels::reference;

// Rows, columns and bytes per row of a weight, checked against its declared size.
struct Layout {
  std::size_t rows;
  std::size_t columns;
  std::size_t row_bytes;
};

Layout layout_of(const lpx_tensor_view& w) {
  if (w.n_dims < 1 || w.n_dims > 2 || w.dims[0] <= 0 || (w.n_dims == 2 && w.dims[1] <= 0)) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "weight must be a non-empty vector or matrix");
  }
  const auto columns = static_cast<std::size_t>(w.dims[0]);
  const auto rows = w.n_dims == 2 ? static_cast<std::size_t>(w.dims[1]) : std::size_t{1};
  const auto row_bytes = reference::row_size_bytes(w.type, columns);
  if (!row_bytes) {
    throw lpx::Error(LPX_ERR_UNSUPPORTED, "rows of " + std::to_string(columns) +
                                              " elements are not whole blocks of this type");
  }
  if (*row_bytes != 0 && rows > w.size_bytes / *row_bytes) {
    throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "weight data is shorter than its shape");
  }
  return {rows, columns, static_cast<std::size_t>(*row_bytes)};
}

class ScalarBackend final : public lpx::QuantBackend {
 public:
  explicit ScalarBackend(const lpx::Options&) {}

  bool supports_type(std::int32_t type) const noexcept override {
    return reference::is_valid_tensor_type(type);
  }

  void matmul(const lpx_tensor_view& w, const float* x, float* y, std::size_t batch) override {
    const Layout l = layout_of(w);
    if (row_.size() < l.columns) row_.resize(l.columns);  // grows once per new width
    const auto* data = static_cast<const std::uint8_t*>(w.data);
    for (std::size_t r = 0; r < l.rows; ++r) {
      dequantize(w.type, data + r * l.row_bytes, l.columns, row_.data());
      for (std::size_t b = 0; b < batch; ++b) {
        const float* xb = x + b * l.columns;
        float sum = 0.0f;
        for (std::size_t c = 0; c < l.columns; ++c) sum += row_[c] * xb[c];
        y[b * l.rows + r] = sum;
      }
    }
  }

  void dequantize_row(const lpx_tensor_view& w, std::int64_t row, float* out) override {
    const Layout l = layout_of(w);
    if (row < 0 || static_cast<std::size_t>(row) >= l.rows) {
      throw lpx::Error(LPX_ERR_INVALID_ARGUMENT, "row " + std::to_string(row) + " of " +
                                                     std::to_string(l.rows) + " does not exist");
    }
    const auto* data = static_cast<const std::uint8_t*>(w.data);
    dequantize(w.type, data + static_cast<std::size_t>(row) * l.row_bytes, l.columns, out);
  }

 private:
  static void dequantize(std::int32_t type, const std::uint8_t* src, std::size_t n, float* out) {
    const reference::DequantizeStatus status = reference::dequantize_row(type, src, n, out);
    if (status != reference::DequantizeStatus::ok) {
      throw lpx::Error(LPX_ERR_UNSUPPORTED, reference::describe(status));
    }
  }

  std::vector<float> row_;  // one dequantized row, reused across calls
};

constexpr const char* kCapabilities[] = {
    "device:cpu", "tensor:f32", "tensor:f16",  "tensor:bf16", "tensor:q8_0", "tensor:q4_0",
    "tensor:q4_1", "tensor:q5_0", "tensor:q5_1", "tensor:q4_k", "tensor:q5_k", "tensor:q6_k",
    "tensor:q8_k"};

}  // namespace

LPX_PLUGIN_ENTRY() {
  return lpx::describe<ScalarBackend>(
      {.name = "cpu-scalar",
       .version = "1.0.0",
       .license = "Apache-2.0",
       .description = "Portable scalar CPU kernels (the reference backend; any CPU)",
       .options = {},
       .capabilities = kCapabilities});
}
