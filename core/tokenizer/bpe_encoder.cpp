#include "tokenizer/bpe_encoder.hpp"

#include <algorithm>
#include <limits>

#include "tokenizer/byte_level.hpp"
#include "lpx/cpp/utf8.hpp"
#include "tokenizer/utf8.hpp"

namespace lpx::core::detail {
namespace {

struct LowerPriority {
  template <class B>
  bool operator()(const B& a, const B& b) const noexcept {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

}  // namespace

BpeEncoder::BpeEncoder(const TokenizerTables& tables)
    : tables_(tables), match_data_(tables.splitter->make_match_data()) {}

void BpeEncoder::try_add(std::int32_t left, std::int32_t right) {
  if (left < 0 || right < 0) return;
  const std::int32_t left_id = symbols_[static_cast<std::size_t>(left)].id;
  const std::int32_t right_id = symbols_[static_cast<std::size_t>(right)].id;
  if (left_id < 0 || right_id < 0) return;
  const auto it = tables_.merges.find(merge_key(left_id, right_id));
  if (it == tables_.merges.end()) return;
  queue_.push_back(Bigram{it->second.rank, left, right, left_id, right_id, it->second.result});
  std::push_heap(queue_.begin(), queue_.end(), LowerPriority{});
}

void BpeEncoder::push_byte_fallback(std::uint8_t byte, std::vector<std::int32_t>& out) const {
  // As llama.cpp: a character with no token is looked up byte by byte of its UTF-8 text; bytes
  // that are not tokens either are dropped. (Never happens with a complete byte-level alphabet.)
  for (const char c : ByteLevel::instance().encode(byte)) {
    if (const auto id = tables_.find(std::string_view(&c, 1))) out.push_back(*id);
  }
}

void BpeEncoder::encode_word(std::string_view word, std::vector<std::int32_t>& out) {
  if (tables_.ignore_merges) {
    encoded_.clear();
    ByteLevel::instance().encode(word, encoded_);
    if (const auto id = tables_.find(encoded_)) {
      out.push_back(*id);
      return;
    }
  }
  if (word.size() == 1) {
    const auto byte = static_cast<std::uint8_t>(word[0]);
    const std::int32_t id = tables_.byte_char_tokens[byte];
    if (id >= 0) out.push_back(id);
    else push_byte_fallback(byte, out);
    return;
  }
  if (word.size() <= 48) merge_short(word, out);
  else merge_long(word, out);
}

// Both merge loops apply the same rule: the pair with the lowest rank, the leftmost of equals.
void BpeEncoder::merge_short(std::string_view word, std::vector<std::int32_t>& out) {
  // A byte whose character is no token is kept as -1 - byte: it never merges, and the fallback
  // needs the byte.
  static constexpr Merge kNone{std::numeric_limits<std::int32_t>::max(), -1};
  auto pair = [this](std::size_t k) {
    const std::int32_t left = short_ids_[k];
    const std::int32_t right = short_ids_[k + 1];
    if (left < 0 || right < 0) return kNone;
    const auto it = tables_.merges.find(merge_key(left, right));
    return it == tables_.merges.end() ? kNone : it->second;
  };
  short_ids_.clear();
  for (const char c : word) {
    const auto byte = static_cast<std::uint8_t>(c);
    const std::int32_t id = tables_.byte_char_tokens[byte];
    short_ids_.push_back(id >= 0 ? id : -1 - static_cast<std::int32_t>(byte));
  }
  short_pairs_.clear();
  for (std::size_t k = 0; k + 1 < short_ids_.size(); ++k) short_pairs_.push_back(pair(k));
  while (!short_pairs_.empty()) {
    std::size_t best = 0;
    for (std::size_t k = 1; k < short_pairs_.size(); ++k) {
      if (short_pairs_[k].rank < short_pairs_[best].rank) best = k;
    }
    if (short_pairs_[best].result < 0) break;
    short_ids_[best] = short_pairs_[best].result;
    short_ids_.erase(short_ids_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    short_pairs_.erase(short_pairs_.begin() + static_cast<std::ptrdiff_t>(best));
    if (best > 0) short_pairs_[best - 1] = pair(best - 1);
    if (best < short_pairs_.size()) short_pairs_[best] = pair(best);
  }
  for (const std::int32_t id : short_ids_) {
    if (id >= 0) out.push_back(id);
    else push_byte_fallback(static_cast<std::uint8_t>(-1 - id), out);
  }
}

void BpeEncoder::merge_long(std::string_view word, std::vector<std::int32_t>& out) {
  symbols_.clear();
  queue_.clear();
  const auto n = static_cast<std::int32_t>(word.size());
  for (std::int32_t i = 0; i < n; ++i) {
    const auto byte = static_cast<std::uint8_t>(word[static_cast<std::size_t>(i)]);
    symbols_.push_back(Symbol{tables_.byte_char_tokens[byte], i - 1, i + 1 == n ? -1 : i + 1, byte, true});
  }
  for (std::int32_t i = 1; i < n; ++i) try_add(i - 1, i);
  while (!queue_.empty()) {
    std::pop_heap(queue_.begin(), queue_.end(), LowerPriority{});
    const Bigram bigram = queue_.back();
    queue_.pop_back();
    Symbol& left = symbols_[static_cast<std::size_t>(bigram.left)];
    Symbol& right = symbols_[static_cast<std::size_t>(bigram.right)];
    // Stale: a side was merged away, or changed (its token differs) since the pair was queued.
    if (!left.alive || !right.alive || left.id != bigram.left_id || right.id != bigram.right_id) continue;
    left.id = bigram.result;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) symbols_[static_cast<std::size_t>(right.next)].prev = bigram.left;
    try_add(left.prev, bigram.left);
    try_add(bigram.left, left.next);
  }
  for (std::int32_t i = 0; i != -1; i = symbols_[static_cast<std::size_t>(i)].next) {
    const Symbol& symbol = symbols_[static_cast<std::size_t>(i)];
    if (symbol.id >= 0) out.push_back(symbol.id);
    else push_byte_fallback(symbol.byte, out);
  }
}

Expected<bool> BpeEncoder::encode(std::string_view text, std::vector<std::int32_t>& out) {
  std::string_view clean = text;
  if (!utf8::is_well_formed(text)) {  // what PCRE2 in UTF mode accepts
    sanitize_utf8(text, clean_);
    clean = clean_;
  }
  auto split = tables_.splitter->split(clean, *match_data_, words_, spare_);
  if (!split) return unexpected(split.error());
  for (std::string_view word : words_) encode_word(word, out);
  return true;
}

}  // namespace lpx::core::detail
