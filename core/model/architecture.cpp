#include "model/architecture.hpp"

#include <algorithm>
#include <cmath>

namespace lpx::core {

// Defined in architectures/<name>.cpp.
extern const Architecture kGemma2Architecture;
extern const Architecture kGemma3Architecture;
extern const Architecture kGraniteArchitecture;
extern const Architecture kLlamaArchitecture;
extern const Architecture kPhi3Architecture;
extern const Architecture kQwen2Architecture;
extern const Architecture kQwen3Architecture;
extern const Architecture kSmolLM3Architecture;

namespace {

std::vector<const Architecture*>& architectures() {
  static std::vector<const Architecture*> list{
      &kGemma2Architecture, &kGemma3Architecture, &kGraniteArchitecture, &kLlamaArchitecture,
      &kPhi3Architecture,   &kQwen2Architecture,  &kQwen3Architecture,  &kSmolLM3Architecture};
  return list;
}

}  // namespace

TransformerModel start_description(const char* name, const Hyperparameters& h) {
  TransformerModel model;
  lpx_transformer_desc& d = model.desc();
  d.architecture = name;
  d.n_embd = h.n_embd;
  d.n_head = h.n_head;
  d.n_head_kv = h.n_head_kv;
  d.head_dim = h.head_dim;
  d.n_ff = h.n_ff;
  d.n_vocab = h.n_vocab;
  d.norm_eps = static_cast<float>(h.rms_norm_eps);
  d.attention_scale = 1.0f / std::sqrt(static_cast<float>(h.head_dim));
  return model;
}

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture* a : architectures()) {
    if (name == a->name) return a;
  }
  return nullptr;
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const Architecture* a : architectures()) names.emplace_back(a->name);
  return names;
}

Expected<bool> register_architecture(const Architecture& architecture) {
  if (find_architecture(architecture.name) != nullptr) {
    return invalid_argument("architecture '" + std::string(architecture.name) + "' is already known");
  }
  architectures().push_back(&architecture);
  return true;
}

void unregister_architecture(std::string_view name) {
  std::erase_if(architectures(), [&](const Architecture* a) { return name == a->name; });
}

}  // namespace lpx::core
