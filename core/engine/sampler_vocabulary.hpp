// The model's vocabulary as sampler links see it (lpx_vocabulary, ABI 2.1): each token's bytes as
// the detokenizer emits them, the end-of-generation tokens, and a fingerprint for the links'
// caches. Built once per engine; bind() hands it to a link that asks for it (a grammar).
//
// Threading: immutable after construction; bind() may run on any thread.
#pragma once

#include <cstdint>
#include <vector>

#include "lpx/kinds/sampler.h"
#include "plugin_host/plugin_library.hpp"
#include "tokenizer/tokenizer.hpp"
#include "util/expected.hpp"

namespace lpx::core {

class SamplerVocabulary {
 public:
  // `tokenizer` must outlive this object (the pieces point into it).
  explicit SamplerVocabulary(const Tokenizer& tokenizer);

  const lpx_vocabulary& view() const noexcept { return view_; }
  // Gives the vocabulary to `link` when its plugin takes one (bind_vocabulary, 2.1+); the
  // plugin's refusal, with its code, otherwise.
  Expected<bool> bind(const PluginInstance& link) const;

 private:
  std::vector<const char*> pieces_;
  std::vector<std::uint32_t> lengths_;
  std::vector<std::int32_t> end_of_generation_;
  lpx_vocabulary view_{};
};

}  // namespace lpx::core
