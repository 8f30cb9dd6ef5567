// Byte-level BPE ("gpt2" vocabularies): split the text into words with the pre-tokenizer's
// regexes, turn each byte into its alphabet character, then keep merging the adjacent pair with
// the lowest merge rank (ties: leftmost first). Internal to lpx_tokenizer.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_tables.hpp"
#include "util/expected.hpp"

namespace lpx::core::detail {

class BpeEncoder {
 public:
  explicit BpeEncoder(const TokenizerTables& tables);
  // Encodes `text` (any bytes; ill-formed UTF-8 becomes U+FFFD first), appending to `out`.
  Expected<bool> encode(std::string_view text, std::vector<std::int32_t>& out);

 private:
  struct Symbol {
    std::int32_t id;  // token of the symbol's text, -1 when no token (never merges)
    std::int32_t prev;
    std::int32_t next;
    std::uint8_t byte;  // the first byte (for the fallback of a byte with no token)
    bool alive;
  };
  struct Bigram {
    std::int32_t rank;
    std::int32_t left;
    std::int32_t right;
    std::int32_t left_id;
    std::int32_t right_id;
    std::int32_t result;
  };
  void encode_word(std::string_view word, std::vector<std::int32_t>& out);
  // Short words: rescan the pairs for the best merge each time (no queue).
  void merge_short(std::string_view word, std::vector<std::int32_t>& out);
  // Long words: a priority queue of candidate pairs, stale entries skipped.
  void merge_long(std::string_view word, std::vector<std::int32_t>& out);
  void try_add(std::int32_t left, std::int32_t right);
  void push_byte_fallback(std::uint8_t byte, std::vector<std::int32_t>& out) const;

  const TokenizerTables& tables_;
  std::unique_ptr<RegexSplitter::MatchData, void (*)(RegexSplitter::MatchData*)> match_data_;
  std::string clean_;
  std::string encoded_;
  std::vector<std::string_view> words_;
  std::vector<std::string_view> spare_;
  std::vector<Symbol> symbols_;
  std::vector<Bigram> queue_;  // binary heap: lowest rank, then leftmost, on top
  std::vector<std::int32_t> short_ids_;  // merge_short: the current symbols' tokens
  std::vector<Merge> short_pairs_;       // merge_short: the merge of symbol k and k + 1
};

}  // namespace lpx::core::detail
