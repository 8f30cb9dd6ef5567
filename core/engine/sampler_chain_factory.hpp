// Makes the sampler links of a request: the pipeline's chain as configured, or, when the request
// overrides sampling settings, a chain derived from it. A set field changes the option of the
// link that has it (temperature, top_k -> top-k.k, top_p -> top-p.p, min_p -> min-p.p,
// penalties -> penalties.*); a field no link has adds the standard link for it (penalties first,
// the others just before the selecting link); a temperature above 0 on a greedy chain swaps
// greedy for dist.
//
// Threading: links() may be called from any thread.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

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
  // `chain`: the pipeline's links in order (the last selects). `registry` loads the standard
  // links an override adds; it must outlive the factory.
  SamplerChainFactory(std::vector<SamplerLinkSpec> chain, PluginRegistry& registry)
      : chain_(std::move(chain)), registry_(registry) {}

  // The links for a request. Errors name the field (also as Status::field) and the value.
  Expected<std::vector<std::shared_ptr<PluginInstance>>> links(
      const lpx_sampling_overrides* overrides);

 private:
  Expected<SamplerLinkSpec> standard_link(const std::string& plugin);

  std::vector<SamplerLinkSpec> chain_;
  PluginRegistry& registry_;
  std::mutex mutex_;  // the registry is not thread-safe
};

}  // namespace lpx::core
