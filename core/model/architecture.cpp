#include "model/architecture.hpp"

namespace lpx::core {

// Defined in architectures/<name>.cpp.
extern const Architecture kLlamaArchitecture;
extern const Architecture kQwen2Architecture;

namespace {
const Architecture* const kArchitectures[] = {&kLlamaArchitecture, &kQwen2Architecture};
}  // namespace

const Architecture* find_architecture(std::string_view name) {
  for (const Architecture* a : kArchitectures) {
    if (name == a->name) return a;
  }
  return nullptr;
}

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const Architecture* a : kArchitectures) names.emplace_back(a->name);
  return names;
}

void add_llama_tensors(const Hyperparameters& h, std::vector<ExpectedTensor>& out) {
  const std::int64_t embd = h.n_embd;
  const std::int64_t q = std::int64_t{h.n_head} * h.head_dim;
  const std::int64_t k = std::int64_t{h.n_head_kv} * h.head_dim;
  const std::int64_t v = std::int64_t{h.n_head_kv} * h.head_dim_v;
  const std::int64_t attn_out = std::int64_t{h.n_head} * h.head_dim_v;
  out.push_back({"token_embd.weight", {embd, h.n_vocab}, true});
  out.push_back({"output_norm.weight", {embd}, true});
  out.push_back({"output.weight", {embd, h.n_vocab}, false});        // absent: tied to token_embd
  out.push_back({"rope_freqs.weight", {h.n_rot / 2}, false});        // Llama 3 rope factors
  for (std::uint32_t layer = 0; layer < h.n_layer; ++layer) {
    const std::string b = "blk." + std::to_string(layer) + ".";
    out.push_back({b + "attn_norm.weight", {embd}, true});
    out.push_back({b + "attn_q.weight", {embd, q}, true});
    out.push_back({b + "attn_k.weight", {embd, k}, true});
    out.push_back({b + "attn_v.weight", {embd, v}, true});
    out.push_back({b + "attn_output.weight", {attn_out, embd}, true});
    out.push_back({b + "ffn_norm.weight", {embd}, true});
    out.push_back({b + "ffn_gate.weight", {embd, h.n_ff}, true});
    out.push_back({b + "ffn_up.weight", {embd, h.n_ff}, true});
    out.push_back({b + "ffn_down.weight", {h.n_ff, embd}, true});
    out.push_back({b + "attn_rot_embd", {h.n_rot / 2}, false});       // some old conversions
  }
}

}  // namespace lpx::core
