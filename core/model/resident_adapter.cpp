#include "model/resident_adapter.hpp"

#include <algorithm>
#include <string_view>

namespace lpx::core {
namespace {

// Names travel in "MODEL:ADAPTER" and in URLs and logs: plain ones only.
bool valid_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
}

}  // namespace

Expected<AdapterSpec> parse_adapter_spec(const std::string& text) {
  const std::size_t equals = text.find('=');
  if (equals == std::string::npos) {
    return invalid_argument("adapter '" + text + "' should be NAME=FILE or NAME=FILE@SCALE");
  }
  AdapterSpec spec;
  spec.name = text.substr(0, equals);
  if (!valid_name(spec.name)) {
    return invalid_argument("adapter '" + text + "': its name '" + spec.name +
                            "' should be letters, digits, '-', '_' or '.'");
  }
  auto lora = parse_lora_spec(text.substr(equals + 1));
  if (!lora) return unexpected(lora.error());
  spec.lora = std::move(*lora);
  return spec;
}

Expected<std::unique_ptr<ResidentAdapter>> ResidentAdapter::load(const AdapterSpec& spec, std::uint32_t slot,
                                                                 const ModelFile& model, PluginRegistry& registry) {
  auto lora = LoraAdapter::open(spec.lora, model, registry);
  if (!lora) return unexpected(lora.error().with_context("adapter '" + spec.name + "'"));
  std::unique_ptr<ResidentAdapter> out(new ResidentAdapter());
  out->name_ = spec.name;
  out->slot_ = slot;
  out->path_ = lora->path();
  out->rank_ = lora->rank();
  const std::size_t halves = 2 * lora->pairs().size();
  out->views_.reserve(halves);  // never reallocated: the pairs point into it
  out->names_.reserve(halves);
  for (const LoraPair& p : lora->pairs()) {
    LoraPair mine = p;
    for (const lpx_tensor_view** half : {&mine.a, &mine.b}) {
      auto values = tensor_f32(**half);
      if (!values) return unexpected(values.error().with_context(spec.lora.path));
      lpx_tensor_view view = **half;
      out->names_.emplace_back((*half)->name);
      view.name = out->names_.back().c_str();
      view.type = LPX_TENSOR_F32;
      view.size_bytes = values->size() * sizeof(float);
      view.data = values->data();
      out->data_.push_back(std::move(*values));  // the heap block view.data points at moves along
      out->views_.push_back(view);
      *half = &out->views_.back();
    }
    out->pairs_.push_back(std::move(mine));
  }
  for (const LoraPair& p : out->pairs_) out->by_weight_.emplace(p.weight, &p);
  return out;
}

std::uint64_t ResidentAdapter::bytes() const noexcept {
  std::uint64_t total = 0;
  for (const auto& values : data_) total += values.size() * sizeof(float);
  return total;
}

const LoraPair* ResidentAdapter::find(std::string_view weight) const noexcept {
  const auto it = by_weight_.find(weight);
  return it == by_weight_.end() ? nullptr : it->second;
}

}  // namespace lpx::core
