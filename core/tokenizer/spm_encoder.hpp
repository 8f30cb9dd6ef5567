// SentencePiece-style BPE ("llama" vocabularies): start from UTF-8 characters and keep merging the
// adjacent pair whose concatenation is the token with the highest score (ties: leftmost first);
// characters no token covers become byte tokens <0xNN>. Internal to lpx_tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_tables.hpp"
#include "util/expected.hpp"

namespace lpx::core::detail {

class SpmEncoder {
 public:
  explicit SpmEncoder(const TokenizerTables& tables) : tables_(tables) {}
  // Encodes `text`, whose spaces are already U+2581, appending to `out`.
  Expected<bool> encode(std::string_view text, std::vector<std::int32_t>& out);

 private:
  struct Symbol {
    const char* text;
    std::uint32_t length;  // 0 once merged into its left neighbour
    std::int32_t id;       // the token of the text, -1 when none
    std::int32_t prev;
    std::int32_t next;
  };
  struct Bigram {
    std::int32_t left;
    std::int32_t right;
    float score;
    std::uint32_t length;
    std::int32_t id;  // the token the pair becomes
  };
  // Merges symbols [first, last) and appends their tokens: a rescan for the best pair each time
  // for short segments, a priority queue for long ones (same order: highest score, leftmost).
  Expected<bool> encode_segment(std::int32_t first, std::int32_t last, std::vector<std::int32_t>& out);
  void merge_short(std::int32_t first, std::int32_t last);
  void merge_long(std::int32_t first, std::int32_t last);
  Expected<bool> emit(const Symbol& symbol, std::vector<std::int32_t>& out) const;
  // The token symbols `left` and `right` (adjacent) join into, or -1.
  std::int32_t join(const Symbol& left, const Symbol& right) const;
  void try_add(std::int32_t left, std::int32_t right);
  float score(std::int32_t id) const;
  void push(const Bigram& bigram);
  Bigram pop();

  const TokenizerTables& tables_;
  std::vector<Symbol> symbols_;
  std::vector<Bigram> queue_;  // binary heap: highest score, then leftmost, on top
  std::vector<Symbol> short_symbols_;  // merge_short: the current symbols
  std::vector<std::int32_t> short_pairs_;  // merge_short: what symbol k and k + 1 join into
};

}  // namespace lpx::core::detail
