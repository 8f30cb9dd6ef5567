#include "model/lora_adapter.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <thread>

#include "lpx/cpp/tensor_types.hpp"
#include "reference/dequantize.hpp"
#include "reference/quantize_weights.hpp"

namespace lpx::core {
namespace {

struct Pair {
  std::size_t weight = 0;  // index of W in the model
  const lpx_tensor_view* a = nullptr;
  const lpx_tensor_view* b = nullptr;
};

bool is_float(std::int32_t type) {
  return type == LPX_TENSOR_F32 || type == LPX_TENSOR_F16 || type == LPX_TENSOR_BF16;
}

std::string shape(const lpx_tensor_view& t) {
  std::string out = "[";
  for (std::uint32_t d = 0; d < t.n_dims; ++d) out += (d ? ", " : "") + std::to_string(t.dims[d]);
  return out + "]";
}

// A whole 2-D tensor as f32 rows.
Expected<std::vector<float>> to_f32(const lpx_tensor_view& t) {
  const auto columns = static_cast<std::uint64_t>(t.dims[0]);
  const auto rows = static_cast<std::uint64_t>(t.dims[1]);
  const auto row_bytes = tensor_row_bytes(t.type, columns);
  if (!row_bytes) return invalid_argument("tensor '" + std::string(t.name) + "' has rows its type cannot hold");
  std::vector<float> out(columns * rows);
  const auto* data = static_cast<const std::uint8_t*>(t.data);
  for (std::uint64_t r = 0; r < rows; ++r) {
    if (kernels::reference::dequantize_row(static_cast<lpx_tensor_type>(t.type), data + r * *row_bytes, columns,
                                           out.data() + r * columns) != kernels::reference::DequantizeStatus::ok) {
      return unsupported("tensor '" + std::string(t.name) + "': its type cannot be read");
    }
  }
  return out;
}

}  // namespace

Expected<LoraSpec> parse_lora_spec(const std::string& text) {
  LoraSpec spec{text, 1.0f};
  const std::size_t at = text.rfind('@');
  if (at != std::string::npos && at + 1 < text.size()) {
    const char* first = text.data() + at + 1;
    const char* last = text.data() + text.size();
    float scale = 0;
    const auto [end, error] = std::from_chars(first, last, scale);
    if (error == std::errc() && end == last) {
      if (!std::isfinite(scale)) return invalid_argument("lora '" + text + "': the scale is not a number");
      spec.path = text.substr(0, at);
      spec.scale = scale;
    }
  }
  if (spec.path.empty()) return invalid_argument("lora '" + text + "' names no file");
  return spec;
}

Expected<LoraSummary> merge_lora(ModelFile& model, const LoraSpec& spec, PluginRegistry& registry,
                                 unsigned threads) {
  auto opened = ModelFile::open(spec.path, registry);
  if (!opened) return unexpected(opened.error());
  const ModelFile& adapter = **opened;
  const auto refuse = [&](const std::string& why) { return invalid_argument(spec.path + ": " + why); };
  auto type = adapter.get_string("general.type");
  if (!type || *type != "adapter") return refuse("not an adapter (general.type should be \"adapter\")");
  auto kind = adapter.get_string("adapter.type");
  if (!kind || *kind != "lora") return refuse("not a LoRA adapter (adapter.type should be \"lora\")");
  auto alpha = adapter.has("adapter.lora.alpha") ? adapter.get_float("adapter.lora.alpha") : Expected<double>(0.0);
  if (!alpha) return refuse(alpha.error().message);
  auto arch = adapter.get_string("general.architecture");
  auto base_arch = model.get_string("general.architecture");
  if (!arch || !base_arch || *arch != *base_arch) {
    return refuse("an adapter for " + (arch ? *arch : std::string("an unnamed architecture")) + ", not for " +
                  (base_arch ? *base_arch : std::string("this model")));
  }

  // Pair every A with its B and its weight; check everything before changing anything.
  std::vector<Pair> pairs;
  for (const lpx_tensor_view& t : adapter.tensors()) {
    const std::string name = t.name;
    const std::string suffix = name.size() > 7 ? name.substr(name.size() - 7) : "";
    if (suffix == ".lora_b") continue;
    if (suffix != ".lora_a") return refuse("tensor '" + name + "' is neither a .lora_a nor a .lora_b");
    const std::string weight = name.substr(0, name.size() - 7);
    const lpx_tensor_view* b = adapter.find_tensor(weight + ".lora_b");
    if (b == nullptr) return refuse("'" + name + "' has no '" + weight + ".lora_b'");
    if (weight == "token_embd.weight") return refuse("adapters of the token embedding are not supported");
    const lpx_tensor_view* w = model.find_tensor(weight);
    if (w == nullptr) return refuse("adapts '" + weight + "', which this model does not have");
    if (w->n_dims != 2 || t.n_dims != 2 || b->n_dims != 2 || t.dims[0] != w->dims[0] || b->dims[1] != w->dims[1] ||
        t.dims[1] != b->dims[0]) {
      return refuse("'" + weight + "' is " + shape(*w) + " but its lora_a is " + shape(t) + " and lora_b " +
                    shape(*b) + " (expected [" + std::to_string(w->dims[0]) + ", r] and [r, " +
                    std::to_string(w->dims[1]) + "])");
    }
    if (!is_float(w->type)) {
      return refuse("'" + weight + "' is " + tensor_type_traits(w->type)->name +
                    " here: merge the adapter into the F16/BF16/F32 model, then quantize it");
    }
    pairs.push_back({static_cast<std::size_t>(w - model.tensors().data()), &t, b});
  }
  for (const lpx_tensor_view& t : adapter.tensors()) {
    const std::string name = t.name;
    if (name.size() > 7 && name.substr(name.size() - 7) == ".lora_b" &&
        adapter.find_tensor(name.substr(0, name.size() - 7) + ".lora_a") == nullptr) {
      return refuse("'" + name + "' has no lora_a");
    }
  }
  if (pairs.empty()) return refuse("adapts no tensor");

  LoraSummary summary;
  summary.alpha = static_cast<float>(*alpha);
  const unsigned workers = std::max(1u, threads != 0 ? threads : std::thread::hardware_concurrency());
  // Every merged weight is computed and checked first; only then does the model change.
  std::vector<std::vector<std::uint8_t>> merged;
  for (const Pair& p : pairs) {
    const lpx_tensor_view& w = model.tensors()[p.weight];
    const auto in = static_cast<std::uint64_t>(w.dims[0]);
    const auto out = static_cast<std::uint64_t>(w.dims[1]);
    const auto rank = static_cast<std::uint64_t>(p.a->dims[1]);
    const float s = *alpha != 0 ? spec.scale * static_cast<float>(*alpha) / static_cast<float>(rank) : spec.scale;
    auto weights = to_f32(w);
    auto a = to_f32(*p.a);
    auto b = to_f32(*p.b);
    if (!weights || !a || !b) {
      return unexpected((!weights ? weights.error() : !a ? a.error() : b.error()).with_context(spec.path));
    }
    // W'[o][i] = W[o][i] + s * sum_k B[o][k] * A[k][i], rows split across threads.
    std::vector<std::thread> pool;
    const auto rows_for = [&](std::uint64_t first, std::uint64_t last) {
      for (std::uint64_t o = first; o < last; ++o) {
        float* row = weights->data() + o * in;
        for (std::uint64_t k = 0; k < rank; ++k) {
          const float coefficient = s * (*b)[o * rank + k];
          const float* a_row = a->data() + k * in;
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
    summary.rank = std::max(summary.rank, static_cast<std::uint32_t>(rank));
  }
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto weight_type = static_cast<lpx_tensor_type>(model.tensors()[pairs[k].weight].type);
    model.replace_tensor(pairs[k].weight, weight_type, std::move(merged[k]));
    ++summary.tensors;
  }
  return summary;
}

}  // namespace lpx::core
