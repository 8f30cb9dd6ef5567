#include "quantize/quantize_on_load.hpp"

#include "lpx/cpp/tensor_types.hpp"
#include "quantize/convert_rows.hpp"
#include "reference/quantize_weights.hpp"

namespace lpx::core {
namespace {

constexpr std::uint64_t kSlabElements = std::uint64_t{1} << 22;  // 16 MiB of f32 at a time

bool is_float(std::int32_t type) {
  return type == LPX_TENSOR_F32 || type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16;
}

Expected<std::vector<PlannedTensor>> plan_for(const ModelFile& model, QuantMix mix) {
  auto arch = model.get_string("general.architecture");
  if (!arch) return unexpected(arch.error());
  auto layers = model.get_uint(*arch + ".block_count");
  if (!layers) return unexpected(layers.error());
  std::vector<TensorToQuantize> tensors;
  for (const lpx_tensor_view& t : model.tensors()) {
    tensors.push_back({t.name, static_cast<lpx_tensor_type>(t.type), std::vector<std::int64_t>(t.dims, t.dims + t.n_dims)});
  }
  auto plan = plan_quantization(tensors, static_cast<std::uint32_t>(*layers), mix, false);
  for (const PlannedTensor& p : plan) {
    const lpx_tensor_view& t = model.tensors()[p.input_index];
    if (p.type == t.type) continue;
    if (!is_float(t.type)) {
      return invalid_argument("tensor '" + std::string(t.name) + "' is " + tensor_type_traits(t.type)->name +
                              " already; quantize on load takes F32, F16 and BF16 models (quantizing twice loses quality)");
    }
    if (!kernels::reference::can_quantize_weights(p.type)) {
      return unsupported(std::string("quantizing to ") + tensor_type_traits(p.type)->name + " is not supported");
    }
  }
  return plan;
}

}  // namespace

Expected<std::uint64_t> quantized_tensor_bytes(const ModelFile& model, QuantMix mix) {
  auto plan = plan_for(model, mix);
  if (!plan) return unexpected(plan.error().with_context(model.path()));
  std::uint64_t total = 0;
  for (const PlannedTensor& p : *plan) {
    const lpx_tensor_view& t = model.tensors()[p.input_index];
    const auto columns = static_cast<std::uint64_t>(t.dims[0]);
    total += t.size_bytes / *tensor_row_bytes(t.type, columns) * *tensor_row_bytes(p.type, columns);
  }
  return total;
}

Expected<QuantizeSummary> quantize_on_load(ModelFile& model, QuantMix mix, unsigned threads) {
  auto plan = plan_for(model, mix);
  if (!plan) return unexpected(plan.error().with_context(model.path()));
  QuantizeSummary summary;
  summary.tensors = plan->size();
  ConvertScratch scratch;
  const unsigned workers = conversion_threads(threads);
  for (const PlannedTensor& p : *plan) {
    const lpx_tensor_view view = model.tensors()[p.input_index];
    summary.input_bytes += view.size_bytes;
    if (p.type == view.type) {
      summary.output_bytes += view.size_bytes;
      continue;
    }
    const auto from = static_cast<lpx_tensor_type>(view.type);
    const auto columns = static_cast<std::uint64_t>(view.dims[0]);
    const std::uint64_t in_row = *tensor_row_bytes(from, columns);
    const std::uint64_t out_row = *tensor_row_bytes(p.type, columns);
    const std::uint64_t rows = view.size_bytes / in_row;
    std::vector<std::uint8_t> bytes(rows * out_row);
    const std::uint64_t slab = std::max<std::uint64_t>(1, kSlabElements / columns);
    const auto* data = static_cast<const std::uint8_t*>(view.data);
    for (std::uint64_t first = 0; first < rows; first += slab) {
      const std::uint64_t n = std::min(slab, rows - first);
      auto done = convert_rows(from, data + first * in_row, p.type, bytes.data() + first * out_row, n, columns,
                               workers, view.name, scratch);
      if (!done) return unexpected(std::move(done).error().with_context(model.path()));
    }
    summary.output_bytes += bytes.size();
    ++summary.converted;
    model.replace_tensor(p.input_index, p.type, std::move(bytes));
  }
  return summary;
}

}  // namespace lpx::core
