// Makes the sampler links of a request: the pipeline's chain as configured, or, when the request
// overrides sampling settings, a chain derived from it. A set field changes the option of the
// link that has it (temperature, top_k -> top-k.k, top_p -> top-p.p, min_p -> min-p.p,
// penalties -> penalties.*); a field no link has adds the standard link for it (penalties first,
// the others just before the selecting link); a temperature above 0 on a greedy chain swaps
// greedy for dist. A grammar (2.1) puts the `grammar` link first; its instances, compiled for
// this engine's vocabulary, are kept for the next request with the same grammar.
//
// Threading: links() may be called from any thread.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "engine/sampler_vocabulary.hpp"
#include "lpx/engine.h"
#include "pipeline/resolved_options.hpp"
#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct SamplerLinkSpec {
  std::shared_ptr<PluginLibrary> library;
  ResolvedOptions options;
  std::shared_ptr<PluginInstance> instance;  // made from library and options
};

class SamplerChainFactory {
 public:
  // `chain`: the pipeline's links in order (the last selects), already bound to `vocabulary`.
  // `registry` loads the standard links an override adds; it must outlive the factory.
  SamplerChainFactory(std::vector<SamplerLinkSpec> chain, PluginRegistry& registry,
                      std::shared_ptr<const SamplerVocabulary> vocabulary)
      : chain_(std::move(chain)), registry_(registry), vocabulary_(std::move(vocabulary)) {}

  // The links for a request. Errors name the field (also as Status::field) and the value.
  Expected<std::vector<std::shared_ptr<PluginInstance>>> links(
      const lpx_sampling_overrides* overrides);

 private:
  Expected<SamplerLinkSpec> standard_link(const std::string& plugin);
  // The `grammar` link for a request's grammar: from the cache, or made, bound and cached.
  Expected<std::shared_ptr<PluginInstance>> grammar_link(const std::string& text,
                                                         std::int32_t kind);

  static constexpr std::size_t kGrammarCache = 32;  // compiled grammars kept, most recent first

  std::vector<SamplerLinkSpec> chain_;
  PluginRegistry& registry_;
  std::shared_ptr<const SamplerVocabulary> vocabulary_;
  std::list<std::pair<std::string, std::shared_ptr<PluginInstance>>> grammars_;
  std::mutex mutex_;  // the registry is not thread-safe; guards grammars_
};

}  // namespace lpx::core
