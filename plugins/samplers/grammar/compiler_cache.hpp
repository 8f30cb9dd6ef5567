// One xgrammar GrammarCompiler per vocabulary, shared by every grammar link of the process: it
// holds the vocabulary's sorted trie and caches compiled grammars itself. Keyed by the host's
// vocabulary fingerprint.
//
// Threading: for_vocabulary() may run on any thread; a compiler is thread-safe.
#pragma once

#include <memory>

#include <lpx/kinds/sampler.h>
#include <xgrammar/xgrammar.h>

namespace lpx::grammar {

struct VocabularyCompiler {
  xgrammar::TokenizerInfo tokenizer;
  xgrammar::GrammarCompiler compiler;
  int n_vocab;
};

// The compiler for `vocabulary` (made on first use: the vocabulary's pieces copied).
std::shared_ptr<VocabularyCompiler> for_vocabulary(const lpx_vocabulary& vocabulary);

}  // namespace lpx::grammar
