#include "hf_config.hpp"

#include <cmath>
#include <string_view>

#include <boost/json/value.hpp>

#include "json_fields.hpp"

namespace lpx::safetensors {
namespace {

namespace json = boost::json;
using Error = tl::unexpected<std::string>;
constexpr const char* kFile = "config.json";

struct Family {
  std::string_view model_type;  // config.json's model_type
  std::string_view gguf;        // LPX's architecture
  bool permute_qk;
  bool gemma;
};

constexpr Family kFamilies[] = {
    {"llama", "llama", true, false},     {"mistral", "llama", true, false},
    {"granite", "granite", true, false}, {"smollm3", "smollm3", true, false},
    {"qwen2", "qwen2", false, false},    {"qwen3", "qwen3", false, false},
    {"gemma2", "gemma2", false, true},   {"gemma3_text", "gemma3", false, true},
    {"phi3", "phi3", false, false}};

// Rope base and scaling from one rope parameter object (transformers 5's rope_parameters, or
// transformers 4's top level with rope_scaling), under `<arch>.rope.` + `prefix`.
tl::expected<bool, std::string> read_rope(const JsonFields& fields, const json::object* scaling,
                                          const std::string& key, MetadataTable& out) {
  auto base = fields.optional_number("rope_theta");
  if (!base) return Error(base.error());
  if (*base) out.set_float(key + "freq_base", **base);
  if (scaling == nullptr) return true;
  const JsonFields s(*scaling, kFile);
  auto type = s.optional_string("rope_type");
  if (!type) return Error(type.error());
  if (!*type) {
    type = s.optional_string("type");  // transformers 4's older spelling
    if (!type) return Error(type.error());
  }
  const std::string kind = type->value_or("default");
  if (kind == "default") return true;
  out.set_string(key + "scaling.type", kind);  // the core refuses the kinds it does not run
  auto factor = s.optional_number("factor");
  if (!factor) return Error(factor.error());
  if (*factor) out.set_float(key + "scaling.factor", **factor);
  if (kind == "llama3") {
    for (const auto& [from, to] : {std::pair<const char*, const char*>{"low_freq_factor", "low_freq_factor"},
                                   {"high_freq_factor", "high_freq_factor"},
                                   {"original_max_position_embeddings", "original_context_length"}}) {
      auto value = s.optional_number(from);
      if (!value) return Error(value.error());
      if (!*value) continue;
      // GGUF keeps the original context as a u32, the factors as f32.
      if (std::string_view(to) == "original_context_length" && **value >= 0 && **value == std::floor(**value)) {
        out.set_uint(key + "scaling." + to, static_cast<std::uint64_t>(**value));
      } else {
        out.set_float(key + "scaling." + to, **value);
      }
    }
  }
  return true;
}

const json::object* object_field(const JsonFields& fields, const char* key) {
  const json::value* value = fields.find(key);
  return value != nullptr ? value->if_object() : nullptr;
}

// Global (full attention) rope, and for Gemma the local (sliding window) base.
tl::expected<bool, std::string> read_ropes(const JsonFields& fields, const Family& family,
                                           const std::string& a, MetadataTable& out) {
  const json::object* parameters = object_field(fields, "rope_parameters");
  if (parameters != nullptr && parameters->if_contains("full_attention") != nullptr) {
    // transformers 5, Gemma: one parameter set per attention kind.
    const json::object* global = (*parameters).at("full_attention").if_object();
    const json::object* local = parameters->if_contains("sliding_attention") != nullptr
                                    ? (*parameters).at("sliding_attention").if_object()
                                    : nullptr;
    if (global == nullptr) return Error(fields.error("rope_parameters", "an object of objects"));
    if (auto read = read_rope(JsonFields(*global, kFile), global, a + ".rope.", out); !read) return read;
    if (local != nullptr) {
      auto base = JsonFields(*local, kFile).optional_number("rope_theta");
      if (!base) return Error(base.error());
      if (*base) out.set_float(a + ".rope.freq_base_swa", **base);
    }
    return true;
  }
  if (parameters != nullptr) return read_rope(JsonFields(*parameters, kFile), parameters, a + ".rope.", out);
  if (auto read = read_rope(fields, object_field(fields, "rope_scaling"), a + ".rope.", out); !read) {
    return read;
  }
  if (family.gemma) {
    auto local = fields.optional_number("rope_local_base_freq");
    if (!local) return Error(local.error());
    if (*local) out.set_float(a + ".rope.freq_base_swa", **local);
  }
  return true;
}

// Gemma's sliding-window layers: transformers 5 lists each layer's kind, 4 gives the period.
tl::expected<bool, std::string> read_gemma_windows(const JsonFields& fields, std::uint64_t n_layer,
                                                   const std::string& a, MetadataTable& out) {
  auto window = fields.count_or("sliding_window", 0);
  if (!window) return Error(window.error());
  if (*window != 0) out.set_uint(a + ".attention.sliding_window", *window);
  if (const json::value* types = fields.find("layer_types")) {
    const json::array* kinds = types->if_array();
    if (kinds == nullptr || kinds->size() != n_layer) {
      return Error(fields.error("layer_types", "one attention kind per layer"));
    }
    std::uint64_t period = n_layer + 1;  // no full-attention layer at all
    for (std::uint64_t l = 0; l < n_layer; ++l) {
      if ((*kinds)[l] == "full_attention") {
        period = l + 1;
        break;
      }
    }
    for (std::uint64_t l = 0; l < n_layer; ++l) {
      const bool full = (*kinds)[l] == "full_attention";
      if (!full && (*kinds)[l] != "sliding_attention") {
        return Error(fields.error("layer_types", "\"full_attention\" or \"sliding_attention\" each"));
      }
      if (full != (l % period == period - 1)) {
        return Error(std::string(kFile) + ": 'layer_types' is not a repeating run of sliding-window "
                     "layers each closed by one full-attention layer; LPX runs only that pattern");
      }
    }
    out.set_uint(a + ".attention.sliding_window_pattern", period);
    return true;
  }
  auto pattern = fields.count_or("sliding_window_pattern", 0);
  if (!pattern) return Error(pattern.error());
  if (*pattern != 0) out.set_uint(a + ".attention.sliding_window_pattern", *pattern);
  return true;
}

// A list of numbers as f32.
tl::expected<std::vector<float>, std::string> floats(const JsonFields& fields, const char* key) {
  const json::value* value = fields.find(key);
  const json::array* list = value != nullptr ? value->if_array() : nullptr;
  if (list == nullptr) return Error(fields.error(key, "a list of numbers"));
  std::vector<float> out;
  for (const json::value& v : *list) {
    if (!v.is_number()) return Error(fields.error(key, "a list of numbers"));
    out.push_back(static_cast<float>(v.to_number<double>()));
  }
  return out;
}

// Phi-3's rope, as llama.cpp's converter writes it: rope over int(partial_rotary_factor *
// hidden_size) / heads dims; with LongRoPE ("longrope", or "su" in older configs) the per-dim
// divisors become the tensors rope_factors_short/long.weight and the attention factor
// sqrt(1 + ln(s) / ln(original context)) for s = the config's factor, else context / original
// context (> 1; else 1), or the config's own attention_factor (as transformers computes it).
tl::expected<bool, std::string> read_phi3_rope(const JsonFields& fields, std::uint64_t n_embd, std::uint64_t n_head,
                                               std::uint64_t n_ctx, HfArchitecture& arch, MetadataTable& out) {
  const std::string a = "phi3.";
  // transformers 5 keeps rope_theta, partial_rotary_factor and the scaling in rope_parameters;
  // 4 at the top level and in rope_scaling.
  const json::object* parameters = object_field(fields, "rope_parameters");
  const JsonFields top = parameters != nullptr ? JsonFields(*parameters, kFile) : fields;
  const JsonFields& rotary = fields.find("partial_rotary_factor") != nullptr ? fields : top;
  auto fraction = rotary.number_or("partial_rotary_factor", 1.0);
  if (!fraction) return Error(fraction.error());
  if (!(*fraction > 0 && *fraction <= 1)) return Error(rotary.error("partial_rotary_factor", "a number in (0, 1]"));
  const auto dims = static_cast<std::uint64_t>(*fraction * static_cast<double>(n_embd)) / n_head;
  if (dims == 0 || dims % 2 != 0) {
    return Error(rotary.error("partial_rotary_factor", "a fraction of the head that rotates an even number of dims"));
  }
  out.set_uint(a + "rope.dimension_count", dims);
  auto base = top.optional_number("rope_theta");
  if (!base) return Error(base.error());
  if (*base) out.set_float(a + "rope.freq_base", **base);
  auto original = fields.optional_number("original_max_position_embeddings");
  if (!original) return Error(original.error());
  if (!*original && parameters != nullptr) {
    original = top.optional_number("original_max_position_embeddings");
    if (!original) return Error(original.error());
  }
  if (*original && (**original < 1 || **original != std::floor(**original))) {
    return Error(fields.error("original_max_position_embeddings", "a positive whole number"));
  }
  if (*original) out.set_uint(a + "rope.scaling.original_context_length", static_cast<std::uint64_t>(**original));
  const json::object* scaling = parameters != nullptr ? parameters : object_field(fields, "rope_scaling");
  if (scaling == nullptr) return true;
  const JsonFields s(*scaling, kFile);
  auto type = s.optional_string("rope_type");
  if (!type) return Error(type.error());
  if (!*type) {
    type = s.optional_string("type");
    if (!type) return Error(type.error());
  }
  const std::string kind = type->value_or("default");
  if (kind == "default") return true;
  if (kind != "longrope" && kind != "su") {
    return Error(std::string(kFile) + ": rope type '" + kind + "'; LPX runs Phi-3 with LongRoPE or none");
  }
  if (!*original) return Error(fields.error("original_max_position_embeddings", "set for LongRoPE"));
  auto short_factors = floats(s, "short_factor");
  if (!short_factors) return Error(short_factors.error());
  auto long_factors = floats(s, "long_factor");
  if (!long_factors) return Error(long_factors.error());
  if (short_factors->size() != dims / 2 || long_factors->size() != dims / 2) {
    return Error(std::string(kFile) + ": LongRoPE needs " + std::to_string(dims / 2) +
                 " short and long factors (half the rotated dims); it has " + std::to_string(short_factors->size()) +
                 " and " + std::to_string(long_factors->size()));
  }
  auto given = s.optional_number("attention_factor");
  if (!given) return Error(given.error());
  auto factor = s.optional_number("factor");
  if (!factor) return Error(factor.error());
  const double scale = *factor ? **factor : static_cast<double>(n_ctx) / **original;
  const double attn_factor =
      *given ? **given : scale > 1.0 ? std::sqrt(1.0 + std::log(scale) / std::log(**original)) : 1.0;
  out.set_float(a + "rope.scaling.attn_factor", attn_factor);
  arch.extra_tensors.push_back({"rope_factors_long.weight", std::move(*long_factors)});
  arch.extra_tensors.push_back({"rope_factors_short.weight", std::move(*short_factors)});
  return true;
}

tl::expected<bool, std::string> read_extras(const JsonFields& fields, const Family& family,
                                            const std::string& a, std::uint64_t n_layer,
                                            std::uint64_t head_dim, MetadataTable& out) {
  if (family.model_type == "mistral" || family.model_type == "qwen2" || family.model_type == "qwen3") {
    auto sliding = fields.flag_or("use_sliding_window", family.model_type == "mistral");
    if (!sliding) return Error(sliding.error());
    auto window = fields.count_or("sliding_window", 0);
    if (!window) return Error(window.error());
    if (*sliding && *window != 0) {
      return Error(std::string(kFile) + ": a sliding window of " + std::to_string(*window) +
                   " tokens on every layer; LPX runs " + a + " with full attention only");
    }
  }
  if (family.gemma) {
    if (auto read = read_gemma_windows(fields, n_layer, a, out); !read) return read;
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"}) {
      auto cap = fields.optional_number(key);
      if (!cap) return Error(cap.error());
      if (*cap) out.set_float(a + "." + key, **cap);
    }
    auto scalar = fields.number_or("query_pre_attn_scalar", static_cast<double>(head_dim));
    if (!scalar) return Error(scalar.error());
    if (*scalar != static_cast<double>(head_dim) && n_layer != 46 && n_layer != 62) {
      return Error(std::string(kFile) + ": 'query_pre_attn_scalar' " + std::to_string(*scalar) +
                   " differs from the head dimension; LPX scales queries by the head dimension");
    }
  }
  if (family.model_type == "granite") {
    for (const auto& [from, to] : {std::pair<const char*, const char*>{"logits_scaling", "logit_scale"},
                                   {"residual_multiplier", "residual_scale"},
                                   {"embedding_multiplier", "embedding_scale"},
                                   {"attention_multiplier", "attention.scale"}}) {
      auto value = fields.optional_number(from);
      if (!value) return Error(value.error());
      if (*value) out.set_float(a + "." + to, **value);
    }
  }
  if (family.model_type == "smollm3") {
    auto interval = fields.count_or("no_rope_layer_interval", 4);
    if (!interval) return Error(interval.error());
    if (*interval != 4) {
      return Error(std::string(kFile) + ": 'no_rope_layer_interval' " + std::to_string(*interval) +
                   "; LPX runs SmolLM3 with no rope on every fourth layer");
    }
    // transformers 5 lists each layer's use of rope (1) or not (0): it must be that pattern.
    if (const json::value* layers = fields.find("no_rope_layers")) {
      const json::array* uses = layers->if_array();
      if (uses == nullptr || uses->size() != n_layer) return Error(fields.error("no_rope_layers", "one 0 or 1 per layer"));
      for (std::uint64_t l = 0; l < n_layer; ++l) {
        const std::int64_t expected = (l + 1) % 4 != 0 ? 1 : 0;
        if (!(*uses)[l].is_int64() || (*uses)[l].get_int64() != expected) {
          return Error(std::string(kFile) + ": 'no_rope_layers' is not rope on every layer but each fourth; "
                       "LPX runs SmolLM3 with that pattern only");
        }
      }
    }
  }
  return true;
}

}  // namespace

const char* supported_hf_model_types() noexcept {
  return "llama, mistral, granite, smollm3, qwen2, qwen3, gemma2, gemma3_text, phi3";
}

tl::expected<HfArchitecture, std::string> read_hf_config(const json::object& config,
                                                         MetadataTable& out) {
  const JsonFields fields(config, kFile);
  auto model_type = fields.optional_string("model_type");
  if (!model_type) return Error(model_type.error());
  if (!*model_type) return Error(std::string(kFile) + ": no 'model_type'");
  const Family* family = nullptr;
  for (const Family& f : kFamilies) {
    if (f.model_type == **model_type) family = &f;
  }
  if (family == nullptr) {
    return Error(std::string(kFile) + ": model_type '" + **model_type +
                 "' is not an architecture LPX runs (it reads " + supported_hf_model_types() + ")");
  }
  HfArchitecture arch;
  arch.name = std::string(family->gguf);
  arch.permute_qk = family->permute_qk;
  arch.norms_add_one = family->gemma;
  arch.gemma_norms = family->gemma;
  const std::string& a = arch.name;
  out.set_string("general.architecture", a);

  auto n_layer = fields.count("num_hidden_layers");
  auto n_embd = fields.count("hidden_size");
  auto n_ff = fields.count("intermediate_size");
  auto n_head = fields.count("num_attention_heads");
  auto n_vocab = fields.count("vocab_size");
  auto n_ctx = fields.count("max_position_embeddings");
  for (const auto* read : {&n_layer, &n_embd, &n_ff, &n_head, &n_vocab, &n_ctx}) {
    if (!*read) return Error(read->error());
  }
  auto n_head_kv = fields.count_or("num_key_value_heads", *n_head);
  if (!n_head_kv) return Error(n_head_kv.error());
  if (*n_head > UINT32_MAX || *n_head_kv > UINT32_MAX) return Error(fields.error("num_attention_heads", "a head count"));
  auto head_dim = fields.count_or("head_dim", *n_embd / *n_head);
  if (!head_dim) return Error(head_dim.error());
  auto eps = fields.optional_number("rms_norm_eps");
  if (!eps) return Error(eps.error());
  if (!*eps) return Error(fields.error("rms_norm_eps", "a number"));

  arch.n_head = static_cast<std::uint32_t>(*n_head);
  arch.n_head_kv = static_cast<std::uint32_t>(*n_head_kv);
  out.set_uint(a + ".block_count", *n_layer);
  out.set_uint(a + ".embedding_length", *n_embd);
  out.set_uint(a + ".feed_forward_length", *n_ff);
  out.set_uint(a + ".attention.head_count", *n_head);
  out.set_uint(a + ".attention.head_count_kv", *n_head_kv);
  out.set_uint(a + ".context_length", *n_ctx);
  out.set_uint(a + ".vocab_size", *n_vocab);
  out.set_uint(a + ".attention.key_length", *head_dim);
  out.set_uint(a + ".attention.value_length", *head_dim);
  out.set_uint(a + ".rope.dimension_count", *head_dim);
  out.set_float(a + ".attention.layer_norm_rms_epsilon", **eps);
  if (family->model_type == "phi3") {
    arch.fused_projections = true;
    // As llama.cpp writes it; the core ignores the window, as llama.cpp does (every layer
    // attends globally), so that a converted file runs there as here.
    auto window = fields.count_or("sliding_window", 0);
    if (!window) return Error(window.error());
    out.set_uint(a + ".attention.sliding_window", *window);
    if (auto rope = read_phi3_rope(fields, *n_embd, *n_head, *n_ctx, arch, out); !rope) return Error(rope.error());
  } else if (auto ropes = read_ropes(fields, *family, a, out); !ropes) {
    return Error(ropes.error());
  }
  if (auto extras = read_extras(fields, *family, a, *n_layer, *head_dim, out); !extras) {
    return Error(extras.error());
  }
  return arch;
}

}  // namespace lpx::safetensors
