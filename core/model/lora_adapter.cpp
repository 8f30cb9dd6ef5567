#include "model/lora_adapter.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "lpx/cpp/tensor_types.hpp"
#include "reference/dequantize.hpp"

namespace lpx::core {
namespace {

std::string shape(const lpx_tensor_view& t) {
  std::string out = "[";
  for (std::uint32_t d = 0; d < t.n_dims; ++d) out += (d ? ", " : "") + std::to_string(t.dims[d]);
  return out + "]";
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

Expected<std::vector<float>> tensor_f32(const lpx_tensor_view& t) {
  const auto columns = static_cast<std::uint64_t>(t.dims[0]);
  const auto rows = t.n_dims > 1 ? static_cast<std::uint64_t>(t.dims[1]) : 1;
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

std::uint32_t LoraAdapter::rank() const noexcept {
  std::uint32_t r = 0;
  for (const LoraPair& p : pairs_) r = std::max(r, p.rank);
  return r;
}

std::uint64_t LoraAdapter::bytes() const noexcept {
  std::uint64_t total = 0;
  for (const LoraPair& p : pairs_) total += p.a->size_bytes + p.b->size_bytes;
  return total;
}

Expected<LoraAdapter> LoraAdapter::open(const LoraSpec& spec, const ModelFile& model, PluginRegistry& registry) {
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

  LoraAdapter out;
  out.path_ = spec.path;
  out.alpha_ = static_cast<float>(*alpha);
  for (const lpx_tensor_view& t : adapter.tensors()) {
    const std::string name = t.name;
    const std::string suffix = name.size() > 7 ? name.substr(name.size() - 7) : "";
    if (suffix == ".lora_b") {
      if (adapter.find_tensor(name.substr(0, name.size() - 7) + ".lora_a") == nullptr) {
        return refuse("'" + name + "' has no lora_a");
      }
      continue;
    }
    if (suffix != ".lora_a") return refuse("tensor '" + name + "' is neither a .lora_a nor a .lora_b");
    const std::string weight = name.substr(0, name.size() - 7);
    const lpx_tensor_view* b = adapter.find_tensor(weight + ".lora_b");
    if (b == nullptr) return refuse("'" + name + "' has no '" + weight + ".lora_b'");
    if (weight == "token_embd.weight") return refuse("adapters of the token embedding are not supported");
    const lpx_tensor_view* w = model.find_tensor(weight);
    if (w == nullptr) return refuse("adapts '" + weight + "', which this model does not have");
    if (w->n_dims != 2 || t.n_dims != 2 || b->n_dims != 2 || t.dims[0] != w->dims[0] || b->dims[1] != w->dims[1] ||
        t.dims[1] != b->dims[0] || t.dims[1] == 0) {
      return refuse("'" + weight + "' is " + shape(*w) + " but its lora_a is " + shape(t) + " and lora_b " +
                    shape(*b) + " (expected [" + std::to_string(w->dims[0]) + ", r] and [r, " +
                    std::to_string(w->dims[1]) + "])");
    }
    const auto rank = static_cast<std::uint32_t>(t.dims[1]);
    const float s = out.alpha_ != 0 ? spec.scale * out.alpha_ / static_cast<float>(rank) : spec.scale;
    out.pairs_.push_back({weight, &t, b, rank, s});
  }
  if (out.pairs_.empty()) return refuse("adapts no tensor");
  out.file_ = std::move(*opened);
  return out;
}

}  // namespace lpx::core
