#include "engine/sampler_chain_factory.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace lpx::core {
namespace {

struct Field {
  std::uint32_t bit;
  const char* request_name;  // as the request (and the HTTP API) calls it
  const char* plugin;
  const char* option;
};

// Insertion order for links an override adds: penalties lead, then the filters.
constexpr Field kFields[] = {
    {LPX_SET_REPEAT_PENALTY, "repeat_penalty", "penalties", "repeat"},
    {LPX_SET_PRESENCE_PENALTY, "presence_penalty", "penalties", "presence"},
    {LPX_SET_FREQUENCY_PENALTY, "frequency_penalty", "penalties", "frequency"},
    {LPX_SET_PENALTY_LAST_N, "penalty_last_n", "penalties", "last_n"},
    {LPX_SET_TOP_K, "top_k", "top-k", "k"},
    {LPX_SET_TOP_P, "top_p", "top-p", "p"},
    {LPX_SET_MIN_P, "min_p", "min-p", "p"},
    {LPX_SET_TEMPERATURE, "temperature", "temperature", "temperature"},
};

OptionValue value_of(const lpx_sampling_overrides& o, std::uint32_t bit) {
  switch (bit) {
    case LPX_SET_TEMPERATURE: return o.temperature;
    case LPX_SET_TOP_K: return static_cast<std::int64_t>(o.top_k);
    case LPX_SET_TOP_P: return o.top_p;
    case LPX_SET_MIN_P: return o.min_p;
    case LPX_SET_REPEAT_PENALTY: return o.repeat_penalty;
    case LPX_SET_PRESENCE_PENALTY: return o.presence_penalty;
    case LPX_SET_FREQUENCY_PENALTY: return o.frequency_penalty;
    default: return static_cast<std::int64_t>(o.penalty_last_n);
  }
}

// Sets `name` in `options` after checking it against the plugin's declared range.
Expected<bool> set_option(ResolvedOptions& options, const char* name, const OptionValue& value,
                          const char* request_name) {
  auto spec = std::find_if(options.specs.begin(), options.specs.end(),
                           [&](const OptionSpec& s) { return s.name == name; });
  if (spec == options.specs.end()) {
    return invalid_argument(std::string(request_name) + ": the sampler has no option '" + name + "'");
  }
  const double number = std::holds_alternative<double>(value)
                            ? std::get<double>(value)
                            : static_cast<double>(std::get<std::int64_t>(value));
  if (!std::isfinite(number) ||
      (spec->range && (number < spec->range->first || number > spec->range->second))) {
    std::string message = std::string(request_name) + " = " + to_toml_text(value) + " is invalid";
    if (spec->range) {
      message += " (must be between " + to_toml_text(spec->range->first) + " and " +
                 to_toml_text(spec->range->second) + ")";
    }
    return invalid_argument(message);
  }
  options.values[name] = value;
  return true;
}

bool named(const SamplerLinkSpec& link, const char* plugin) {
  return link.library->description().name == plugin;
}

// The request field among `set` that overrides `link`'s plugin; "" when none does.
std::string override_of(const SamplerLinkSpec& link, std::uint32_t set) {
  for (const Field& field : kFields) {
    if ((set & field.bit) != 0 && named(link, field.plugin)) return field.request_name;
  }
  return "";
}

}  // namespace

Expected<SamplerLinkSpec> SamplerChainFactory::standard_link(const std::string& plugin) {
  auto library = registry_.load(plugin);
  if (!library) return unexpected(library.error());
  SamplerLinkSpec link;
  link.library = *library;
  link.options = default_options(link.library->description().options);
  return link;
}

Expected<std::shared_ptr<PluginInstance>> SamplerChainFactory::grammar_link(
    const std::string& text, std::int32_t kind) {
  if (kind != LPX_GRAMMAR_GBNF && kind != LPX_GRAMMAR_JSON_SCHEMA && kind != LPX_GRAMMAR_STRUCTURAL_TAG) {
    return invalid_argument("grammar: unknown grammar kind " + std::to_string(kind), "grammar");
  }
  std::string key = std::to_string(kind) + ":" + text;
  // The cache and the registry under the lock; the compile outside it, so that a slow grammar
  // holds up no other request (two requests with the same new grammar may both compile it).
  const auto cached = [&]() -> std::shared_ptr<PluginInstance> {
    for (auto it = grammars_.begin(); it != grammars_.end(); ++it) {
      if (it->first == key) {
        grammars_.splice(grammars_.begin(), grammars_, it);  // most recently used first
        return grammars_.front().second;
      }
    }
    return nullptr;
  };
  Expected<SamplerLinkSpec> link = unexpected(Status());
  {
    std::lock_guard lock(mutex_);
    if (auto hit = cached()) return hit;
    link = standard_link("grammar");
  }
  if (!link) return unexpected(Status(LPX_ERR_UNSUPPORTED, "grammar: " + link.error().message, "grammar"));
  link->options.values["grammar"] = text;
  link->options.values["format"] = std::string(kind == LPX_GRAMMAR_GBNF          ? "gbnf"
                                                : kind == LPX_GRAMMAR_JSON_SCHEMA ? "json_schema"
                                                                                  : "structural_tag");
  if (auto valid = link->library->validate_options(link->options); !valid) {
    return unexpected(std::move(valid).error().about("grammar"));
  }
  auto instance = link->library->create(link->options);
  if (!instance) return unexpected(std::move(instance).error().about("grammar"));
  if (vocabulary_) {
    if (auto bound = vocabulary_->bind(**instance); !bound) {
      return unexpected(std::move(bound).error().about("grammar"));
    }
  }
  std::lock_guard lock(mutex_);
  if (auto hit = cached()) return hit;  // compiled meanwhile by another request
  grammars_.emplace_front(std::move(key), *instance);
  if (grammars_.size() > kGrammarCache) grammars_.pop_back();
  return std::move(*instance);
}

Expected<std::vector<std::shared_ptr<PluginInstance>>> SamplerChainFactory::links(
    const lpx_sampling_overrides* overrides) {
  std::vector<std::shared_ptr<PluginInstance>> out;
  std::uint32_t set = overrides ? overrides->set & ~LPX_SET_SEED : 0u;
  // The grammar fields exist only in overrides of 2.1 and later.
  const bool has_grammar_fields =
      overrides != nullptr &&
      overrides->struct_size >= offsetof(lpx_sampling_overrides, grammar_kind) + sizeof(std::int32_t);
  if ((set & LPX_SET_GRAMMAR) != 0 && !has_grammar_fields) {
    return invalid_argument("grammar: LPX_SET_GRAMMAR in sampling overrides of " +
                                std::to_string(overrides->struct_size) +
                                " bytes, which end before the grammar fields (ABI 2.1)",
                            "grammar");
  }
  const bool grammar = (set & LPX_SET_GRAMMAR) != 0;
  set &= ~LPX_SET_GRAMMAR;
  if (!grammar && set == 0) {  // the pipeline's chain as built: chain_ never changes
    for (const SamplerLinkSpec& link : chain_) out.push_back(link.instance);
    return out;
  }
  if (grammar) {
    if (overrides->grammar == nullptr) {
      return invalid_argument("grammar: LPX_SET_GRAMMAR without a grammar", "grammar");
    }
    auto link = grammar_link(overrides->grammar, overrides->grammar_kind);
    if (!link) return unexpected(link.error());
    out.push_back(std::move(*link));
  }
  if (set == 0) {
    for (const SamplerLinkSpec& link : chain_) out.push_back(link.instance);
    return out;
  }
  std::lock_guard lock(mutex_);
  std::vector<SamplerLinkSpec> chain = chain_;  // copies options; instances remade below
  for (SamplerLinkSpec& link : chain) link.instance.reset();
  std::size_t selector = chain.size() - 1;

  for (const Field& field : kFields) {
    if ((set & field.bit) == 0) continue;
    auto it = std::find_if(chain.begin(), chain.end(),
                           [&](const SamplerLinkSpec& l) { return named(l, field.plugin); });
    if (it == chain.end()) {
      auto link = standard_link(field.plugin);
      if (!link) {
        return unexpected(Status(LPX_ERR_UNSUPPORTED,
                                 std::string(field.request_name) + ": " + link.error().message,
                                 field.request_name));
      }
      const bool lead = std::string_view(field.plugin) == "penalties";
      it = chain.insert(lead ? chain.begin() : chain.begin() + static_cast<long>(selector),
                        std::move(*link));
      ++selector;
    }
    auto ok = set_option(it->options, field.option, value_of(*overrides, field.bit),
                         field.request_name);
    if (!ok) return unexpected(std::move(ok).error().about(field.request_name));
  }
  if ((set & LPX_SET_TEMPERATURE) && overrides->temperature > 0 && named(chain[selector], "greedy")) {
    auto dist = standard_link("dist");
    if (!dist) {
      return unexpected(Status(LPX_ERR_UNSUPPORTED, "temperature: " + dist.error().message, "temperature"));
    }
    chain[selector] = std::move(*dist);
  }
  for (SamplerLinkSpec& link : chain) {
    // A link the request's values made invalid (checks across options, or create): the field is
    // the request's override of this link's plugin.
    const std::string field = override_of(link, set);
    if (auto valid = link.library->validate_options(link.options); !valid) {
      return unexpected(std::move(valid).error().about(field));
    }
    auto instance = link.library->create(link.options);
    if (!instance) return unexpected(std::move(instance).error().about(field));
    if (vocabulary_) {
      if (auto bound = vocabulary_->bind(**instance); !bound) {
        return unexpected(std::move(bound).error().about(field));
      }
    }
    out.push_back(std::move(*instance));
  }
  return out;
}

}  // namespace lpx::core
