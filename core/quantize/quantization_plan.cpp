#include "quantize/quantization_plan.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>

#include "lpx/cpp/tensor_types.hpp"

namespace lpx::core {
namespace {

struct MixInfo {
  QuantMix mix;
  const char* name;
  lpx_tensor_type base;
  std::uint32_t file_type;  // llama_ftype
};

constexpr std::array<MixInfo, 12> kMixes = {{
    {QuantMix::F16, "F16", LPX_TENSOR_F16, 1},        {QuantMix::BF16, "BF16", LPX_TENSOR_BF16, 32},
    {QuantMix::Q8_0, "Q8_0", LPX_TENSOR_Q8_0, 7},     {QuantMix::Q4_0, "Q4_0", LPX_TENSOR_Q4_0, 2},
    {QuantMix::Q4_1, "Q4_1", LPX_TENSOR_Q4_1, 3},     {QuantMix::Q5_0, "Q5_0", LPX_TENSOR_Q5_0, 8},
    {QuantMix::Q5_1, "Q5_1", LPX_TENSOR_Q5_1, 9},     {QuantMix::Q4_K_S, "Q4_K_S", LPX_TENSOR_Q4_K, 14},
    {QuantMix::Q4_K_M, "Q4_K_M", LPX_TENSOR_Q4_K, 15}, {QuantMix::Q5_K_S, "Q5_K_S", LPX_TENSOR_Q5_K, 16},
    {QuantMix::Q5_K_M, "Q5_K_M", LPX_TENSOR_Q5_K, 17}, {QuantMix::Q6_K, "Q6_K", LPX_TENSOR_Q6_K, 18},
}};

const MixInfo& info(QuantMix mix) {
  return *std::find_if(kMixes.begin(), kMixes.end(), [&](const MixInfo& m) { return m.mix == mix; });
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// What the rules call a tensor.
enum class Role { kOutput, kTokenEmbedding, kAttentionV, kAttentionK, kAttentionQ, kAttentionOutput,
                  kFfnUp, kFfnGate, kFfnDown, kOther };

Role role_of(std::string_view name) {
  if (name == "output.weight") return Role::kOutput;
  if (name == "token_embd.weight" || name == "per_layer_token_embd.weight") return Role::kTokenEmbedding;
  // Fused QKV and MLA's kv_b count as attn_v: the value part is the sensitive one.
  if (contains(name, "attn_qkv.weight") || contains(name, "attn_kv_b.weight") || contains(name, "attn_v.weight")) {
    return Role::kAttentionV;
  }
  if (contains(name, "attn_k.weight")) return Role::kAttentionK;
  if (contains(name, "attn_q.weight")) return Role::kAttentionQ;
  if (contains(name, "attn_output.weight")) return Role::kAttentionOutput;
  if (contains(name, "ffn_up")) return Role::kFfnUp;
  if (contains(name, "ffn_gate")) return Role::kFfnGate;
  if (contains(name, "ffn_down")) return Role::kFfnDown;
  return Role::kOther;
}

// Dimensions up to the last one above 1 (a [576, 1] tensor is 1-D).
std::size_t effective_dims(const std::vector<std::int64_t>& dims) {
  std::size_t n = dims.size();
  while (n > 1 && dims[n - 1] == 1) --n;
  return n;
}

// Matrices named *weight, except norms, routers, positional tables and other small or special
// tensors that llama-quantize leaves as they are.
bool may_quantize(const TensorToQuantize& t) {
  if (effective_dims(t.dims) < 2) return false;
  const std::string_view name = t.name;
  if (name.size() < 6 || name.substr(name.size() - 6) != "weight") return false;
  static constexpr std::string_view kLeftAlone[] = {
      "_norm.weight", "ffn_gate_inp.weight", "ffn_gate_tid2eid.weight", "altup", "laurel",
      "per_layer_model_proj", "ssm_conv1d", "shortconv.conv.weight", "indexer.k_proj.weight",
      "indexer.q_proj.weight", "time_mix_first.weight", "time_mix_w0.weight", "time_mix_w1.weight",
      "time_mix_w2.weight", "time_mix_v0.weight", "time_mix_v1.weight", "time_mix_v2.weight",
      "time_mix_a0.weight", "time_mix_a1.weight", "time_mix_a2.weight", "time_mix_g1.weight",
      "time_mix_g2.weight", "time_mix_decay_w1.weight", "time_mix_decay_w2.weight",
      "time_mix_lerp_fused.weight", "attn_rel_b.weight", ".position_embd", "sam.pos_embd", "sam.neck.",
      "sam.net_", ".rel_pos", ".patch_embd", ".patch_merger", "a.rvq.codebook", "mm.a.code_embd"};
  for (std::string_view part : kLeftAlone) {
    if (contains(name, part)) return false;
  }
  return name != "position_embd.weight" && name != "token_types.weight";
}

std::int64_t block_of(lpx_tensor_type type) { return tensor_type_traits(type)->block_elements; }

// A type whose blocks do not tile the rows steps down to a 32-element type, and to F16 when even
// those do not fit.
lpx_tensor_type fit_rows(lpx_tensor_type type, std::int64_t columns) {
  if (columns % block_of(type) == 0) return type;
  lpx_tensor_type fallback = type;
  if (type == LPX_TENSOR_Q4_K) fallback = LPX_TENSOR_Q5_0;
  if (type == LPX_TENSOR_Q5_K) fallback = LPX_TENSOR_Q5_1;
  if (type == LPX_TENSOR_Q6_K) fallback = LPX_TENSOR_Q8_0;
  return columns % block_of(fallback) == 0 ? fallback : LPX_TENSOR_F16;
}

// More bits for the first and last eighth of the layers and every third one between.
bool use_more_bits(int layer, int layers) {
  return layer < layers / 8 || layer >= 7 * layers / 8 || (layer - layers / 8) % 3 == 2;
}

int layer_of(const std::string& name) {
  int layer = -1;
  std::sscanf(name.c_str(), "blk.%d.", &layer);
  return layer;
}

}  // namespace

std::optional<QuantMix> parse_quant_mix(std::string_view name) {
  std::string upper(name);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (upper == "Q4_K") return QuantMix::Q4_K_M;
  if (upper == "Q5_K") return QuantMix::Q5_K_M;
  for (const MixInfo& m : kMixes) {
    if (upper == m.name) return m.mix;
  }
  return std::nullopt;
}

std::string_view quant_mix_name(QuantMix mix) { return info(mix).name; }

std::string quant_mix_names() {
  std::string names;
  for (const MixInfo& m : kMixes) names += (names.empty() ? "" : ", ") + std::string(m.name);
  return names + " (Q4_K = Q4_K_M, Q5_K = Q5_K_M)";
}

std::vector<std::string> quant_mix_choices() {
  std::vector<std::string> names;
  for (const MixInfo& m : kMixes) names.emplace_back(m.name);
  names.emplace_back("Q4_K");
  names.emplace_back("Q5_K");
  return names;
}

std::uint32_t quant_mix_file_type(QuantMix mix) { return info(mix).file_type; }

std::vector<PlannedTensor> plan_quantization(const std::vector<TensorToQuantize>& tensors,
                                             std::uint32_t layers, QuantMix mix, bool pure) {
  // Output order: by layer (tensors outside the layers first), then by name.
  std::vector<std::size_t> order(tensors.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const int la = layer_of(tensors[a].name), lb = layer_of(tensors[b].name);
    return la != lb ? la < lb : tensors[a].name < tensors[b].name;
  });

  const lpx_tensor_type base = info(mix).base;
  const bool quantized_base = base != LPX_TENSOR_F16 && base != LPX_TENSOR_BF16;
  const bool tied_embeddings = std::none_of(tensors.begin(), tensors.end(),
                                            [](const TensorToQuantize& t) { return t.name == "output.weight"; });
  int attention_v_total = 0;
  for (const TensorToQuantize& t : tensors) attention_v_total += role_of(t.name) == Role::kAttentionV;
  const int ffn_layers = static_cast<int>(layers);
  int attention_v_seen = 0, ffn_down_seen = 0;

  std::vector<PlannedTensor> plan;
  for (std::size_t index : order) {
    const TensorToQuantize& t = tensors[index];
    if (!may_quantize(t)) {
      plan.push_back({index, t.type});
      continue;
    }
    lpx_tensor_type type = base;
    if (quantized_base && !pure) {
      const Role role = role_of(t.name);
      if (role == Role::kOutput || (tied_embeddings && role == Role::kTokenEmbedding)) {
        // The output matrix: Q6_K (Q8_0 stays Q8_0, and so does a row the base blocks cannot tile).
        if (t.dims[0] % block_of(type) != 0) {
          type = LPX_TENSOR_Q8_0;
        } else if (type != LPX_TENSOR_Q8_0) {
          type = LPX_TENSOR_Q6_K;
        }
      } else if (role == Role::kAttentionV) {
        if ((mix == QuantMix::Q4_K_M || mix == QuantMix::Q5_K_M) && use_more_bits(attention_v_seen, attention_v_total)) {
          type = LPX_TENSOR_Q6_K;
        } else if (mix == QuantMix::Q4_K_S && attention_v_seen < 4) {
          type = LPX_TENSOR_Q5_K;
        }
        ++attention_v_seen;
      } else if (role == Role::kFfnDown) {
        const int layer = ffn_down_seen;
        if ((mix == QuantMix::Q4_K_M || mix == QuantMix::Q5_K_M) && use_more_bits(layer, ffn_layers)) {
          type = LPX_TENSOR_Q6_K;
        } else if (mix == QuantMix::Q4_K_S && layer < ffn_layers / 8) {
          type = LPX_TENSOR_Q5_K;
        }
        ++ffn_down_seen;
      }
    }
    if (quantized_base) type = fit_rows(type, t.dims[0]);
    plan.push_back({index, type});
  }
  return plan;
}

}  // namespace lpx::core
