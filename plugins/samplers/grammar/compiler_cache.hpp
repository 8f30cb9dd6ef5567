// One xgrammar GrammarCompiler per vocabulary, shared by every grammar link of the process: it
// holds the vocabulary's sorted trie (compiled grammars are kept by the host, not here). Keyed by
// the host's vocabulary fingerprint.
//
// Threading: for_vocabulary() may run on any thread; a compiler is thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <lpx/kinds/sampler.h>
#include <xgrammar/xgrammar.h>

namespace lpx::grammar {

struct VocabularyCompiler {
  xgrammar::TokenizerInfo tokenizer;
  xgrammar::GrammarCompiler compiler;
  int n_vocab;
  std::vector<std::int32_t> end_of_generation;
  std::vector<std::string> pieces;  // each token's bytes (empty for control tokens)
};

// xgrammar's message without its log prefix ("[21:11:07] /path/file.cc:94: "), which says
// nothing to a client and shows a build path.
std::string without_log_prefix(const std::string& message);

// The compiler for `vocabulary` (made on first use: the vocabulary's pieces copied).
std::shared_ptr<VocabularyCompiler> for_vocabulary(const lpx_vocabulary& vocabulary);

}  // namespace lpx::grammar
