#include "compiler_cache.hpp"

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace lpx::grammar {
namespace {

VocabularyCompiler* make(const lpx_vocabulary& v) {
  std::vector<std::string> pieces(v.n_vocab);
  for (std::uint32_t i = 0; i < v.n_vocab; ++i) {
    // Raw bytes as the detokenizer emits them; control tokens are empty, which xgrammar never
    // allows inside the grammar.
    if (v.piece_lengths[i] > 0) pieces[i].assign(v.pieces[i], v.piece_lengths[i]);
  }
  std::vector<std::int32_t> stops(v.end_of_generation, v.end_of_generation + v.end_of_generation_count);
  xgrammar::TokenizerInfo info(pieces, xgrammar::VocabType::RAW, static_cast<int>(v.n_vocab), stops);
  // One compiling thread: compilation happens while a request is submitted, beside decoding.
  // No cache of xgrammar's own: the host keeps the compiled links it reuses (32 of them), and
  // an unbounded cache would let clients that vary their schemas grow memory without end.
  return new VocabularyCompiler{info, xgrammar::GrammarCompiler(info, 1, /*cache_enabled=*/false),
                                static_cast<int>(v.n_vocab), stops, std::move(pieces)};
}

}  // namespace

std::string without_log_prefix(const std::string& message) {
  // "[hh:mm:ss] path:line: text" -> "text"
  if (message.empty() || message.front() != '[') return message;
  const std::size_t close = message.find("] ");
  if (close == std::string::npos) return message;
  const std::size_t colon = message.find(": ", close + 2);
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

std::shared_ptr<VocabularyCompiler> for_vocabulary(const lpx_vocabulary& vocabulary) {
  static std::mutex mutex;
  static std::map<std::uint64_t, std::weak_ptr<VocabularyCompiler>> compilers;
  std::lock_guard lock(mutex);
  std::weak_ptr<VocabularyCompiler>& slot = compilers[vocabulary.fingerprint];
  if (auto alive = slot.lock()) return alive;
  std::shared_ptr<VocabularyCompiler> made(make(vocabulary));
  slot = made;
  return made;
}

}  // namespace lpx::grammar
