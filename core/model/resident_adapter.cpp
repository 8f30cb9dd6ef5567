#include "model/resident_adapter.hpp"

#include <algorithm>

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

ResidentAdapter::ResidentAdapter(std::string name, std::uint32_t slot, LoraAdapter lora)
    : name_(std::move(name)), slot_(slot), lora_(std::move(lora)) {
  for (const LoraPair& p : lora_.pairs()) by_weight_.emplace(p.weight, &p);
}

Expected<std::unique_ptr<ResidentAdapter>> ResidentAdapter::load(const AdapterSpec& spec, std::uint32_t slot,
                                                                 const ModelFile& model, PluginRegistry& registry) {
  auto lora = LoraAdapter::open(spec.lora, model, registry);
  if (!lora) return unexpected(lora.error().with_context("adapter '" + spec.name + "'"));
  return std::unique_ptr<ResidentAdapter>(new ResidentAdapter(spec.name, slot, std::move(*lora)));
}

const LoraPair* ResidentAdapter::find(std::string_view weight) const noexcept {
  const auto it = by_weight_.find(weight);
  return it == by_weight_.end() ? nullptr : it->second;
}

}  // namespace lpx::core
