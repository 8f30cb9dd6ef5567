#include "model/lora_merge.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "lpx/cpp/tensor_types.hpp"
#include "reference/quantize_weights.hpp"

namespace lpx::core {
namespace {

bool is_float(std::int32_t type) {
  return type == LPX_TENSOR_F32 || type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16;
}

}  // namespace

Expected<LoraSummary> merge_lora(ModelFile& model, const LoraSpec& spec, PluginRegistry& registry,
                                 unsigned threads) {
  auto adapter = LoraAdapter::open(spec, model, registry);
  if (!adapter) return unexpected(adapter.error());
  const auto refuse = [&](const std::string& why) { return invalid_argument(spec.path + ": " + why); };
  std::vector<std::size_t> targets;  // each pair's weight, as an index into the model's tensors
  for (const LoraPair& p : adapter->pairs()) {
    const lpx_tensor_view* w = model.find_tensor(p.weight);
    if (!is_float(w->type)) {
      return refuse("'" + p.weight + "' is " + tensor_type_traits(w->type)->name +
                    " here: merge the adapter into the F16/BF16/F32 model, then quantize it (or serve it "
                    "per request: [model] adapters)");
    }
    targets.push_back(static_cast<std::size_t>(w - model.tensors().data()));
  }

  LoraSummary summary;
  summary.alpha = adapter->alpha();
  const unsigned workers = std::max(1u, threads != 0 ? threads : std::thread::hardware_concurrency());
  // Every merged weight is computed and checked first; only then does the model change.
  std::vector<std::vector<std::uint8_t>> merged;
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const LoraPair& p = adapter->pairs()[k];
    const lpx_tensor_view& w = model.tensors()[targets[k]];
    const auto in = static_cast<std::uint64_t>(w.dims[0]);
    const auto out = static_cast<std::uint64_t>(w.dims[1]);
    const std::uint64_t rank = p.rank;
    auto weights = tensor_f32(w);
    auto a = tensor_f32(*p.a);
    auto b = tensor_f32(*p.b);
    if (!weights || !a || !b) {
      return unexpected((!weights ? weights.error() : !a ? a.error() : b.error()).with_context(spec.path));
    }
    // W'[o][i] = W[o][i] + s * sum_k B[o][k] * A[k][i], rows split across threads.
    std::vector<std::thread> pool;
    const auto rows_for = [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t o = first; o < last; ++o) {
        float* row = weights->data() + o * in;
        for (std::uint64_t r = 0; r < rank; ++r) {
          const float coefficient = p.scale * (*b)[o * rank + r];
          const float* a_row = a->data() + r * in;
          for (std::uint64_t i = 0; i < in; ++i) row[i] += coefficient * a_row[i];
        }
      }
    };
    for (unsigned t = 1; t < workers; ++t) pool.emplace_back(rows_for, out * t / workers, out * (t + 1) / workers);
    rows_for(0, out / workers);
    for (std::thread& t : pool) t.join();
    const auto weight_type = static_cast<lpx_tensor_type>(w.type);
    std::vector<std::uint8_t> bytes(w.size_bytes);
    if (weight_type == LPX_TENSOR_F32) {
      std::memcpy(bytes.data(), weights->data(), bytes.size());
    } else {
      kernels::reference::quantize_weight_rows(weight_type, weights->data(), static_cast<std::int64_t>(out),
                                               static_cast<std::int64_t>(in), bytes.data());
    }
    // Not finite in f32, or past what f16 holds (65504): refused, not stored as infinities.
    const bool finite = std::all_of(weights->begin(), weights->end(), [](float v) { return std::isfinite(v); }) &&
                        (weight_type == LPX_TENSOR_F32 ||
                         kernels::reference::quantized_rows_finite(weight_type, bytes.data(), static_cast<std::int64_t>(out),
                                                                   static_cast<std::int64_t>(in)));
    if (!finite) {
      return refuse("merging into '" + std::string(w.name) + "' gives weights " + tensor_type_traits(weight_type)->name +
                    " cannot hold");
    }
    merged.push_back(std::move(bytes));
    summary.rank = std::max(summary.rank, p.rank);
  }
  for (std::size_t k = 0; k < targets.size(); ++k) {
    const auto weight_type = static_cast<lpx_tensor_type>(model.tensors()[targets[k]].type);
    model.replace_tensor(targets[k], weight_type, std::move(merged[k]));
    ++summary.tensors;
  }
  return summary;
}

}  // namespace lpx::core
