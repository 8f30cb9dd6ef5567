// The lookup tables a Tokenizer is built into, shared by the encoders and decoders. Immutable after
// Tokenizer::create; internal to lpx_tokenizer.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/unordered/unordered_flat_map.hpp>
#include <boost/unordered/unordered_flat_set.hpp>

#include "tokenizer/pre_tokenizer.hpp"
#include "tokenizer/vocabulary.hpp"

namespace lpx::core::detail {

// Token attributes as bits, as llama.cpp keeps them: a token can gain `control` on top of its type
// (end-of-generation and fill-in-the-middle tokens found by their text), and lstrip/rstrip say a
// special token swallows the whitespace before/after it in the input.
enum TokenAttr : std::uint16_t {
  kAttrNormal = 1 << 0,
  kAttrUnknown = 1 << 1,
  kAttrControl = 1 << 2,
  kAttrUserDefined = 1 << 3,
  kAttrUnused = 1 << 4,
  kAttrByte = 1 << 5,
  kAttrLstrip = 1 << 6,
  kAttrRstrip = 1 << 7,
};

// Token texts are short: hash them 8 bytes at a time (the table mixes the result further).
struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept {
    std::uint64_t h = 0x9E3779B97F4A7C15ull ^ s.size();
    const char* p = s.data();
    std::size_t n = s.size();
    for (; n >= 8; p += 8, n -= 8) {
      std::uint64_t word;
      std::memcpy(&word, p, 8);
      h = (h ^ word) * 0xFF51AFD7ED558CCDull;
      h ^= h >> 32;
    }
    if (n > 0) {
      std::uint64_t word = 0;
      std::memcpy(&word, p, n);
      h = (h ^ word) * 0xC4CEB9FE1A85EC53ull;
      h ^= h >> 29;
    }
    return static_cast<std::size_t>(h);
  }
};
struct StringEqual {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept { return a == b; }
};
using TokenMap = boost::unordered_flat_map<std::string, std::int32_t, StringHash, StringEqual>;

struct Merge {
  std::int32_t rank;    // position in tokenizer.ggml.merges (lower merges first)
  std::int32_t result;  // the token the pair becomes
};
// (left id << 32 | right id) -> merge.
using MergeMap = boost::unordered_flat_map<std::uint64_t, Merge>;
inline std::uint64_t merge_key(std::int32_t left, std::int32_t right) noexcept {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(left)) << 32) |
         static_cast<std::uint32_t>(right);
}

// The special tokens one encode mode looks for, and a trie over their texts to find every
// occurrence in one pass over the input.
struct SpecialTokenIndex {
  std::vector<std::int32_t> tokens;    // in matching order: longest text first, then lowest id
  std::array<std::int32_t, 256> root;  // first byte -> trie node, -1: no token starts so
  boost::unordered_flat_map<std::uint64_t, std::int32_t> edges;  // (node << 8 | byte) -> node
  std::vector<std::int32_t> terminal;  // node -> position in `tokens` of the token ending there, -1
};

struct TokenizerTables {
  Vocabulary vocabulary;
  std::int32_t size = 0;
  std::vector<std::uint16_t> attrs;  // TokenAttr bits per token
  std::vector<std::string> pieces;   // what each token decodes to (control text included)
  TokenMap ids;                      // text -> id, every non-empty token

  // Tokens matched in the input before the model's own splitting: control, user-defined and
  // unknown tokens, longest text first (ties by id).
  std::vector<std::int32_t> special_tokens;
  SpecialTokenIndex plain_index;    // parse_special off: user-defined tokens only
  SpecialTokenIndex special_index;  // parse_special on: all of special_tokens
  std::vector<bool> end_of_generation;
  std::optional<std::int32_t> eot, eom;

  // spm
  bool space_prefix = false;                    // add_space_prefix, spm only
  std::array<std::int32_t, 256> byte_tokens{};  // byte -> <0xXX> (or fallback) token, -1: none
  // The 1-4 byte strings that some token has right before a U+2581. Text can be cut before a
  // U+2581 whose preceding symbol is not one of these: no merge can cross that point, so the
  // pieces are merged on their own (same result, far smaller queues).
  boost::unordered_flat_set<std::string, StringHash, StringEqual> joins_space_mark;
  // (left id << 32 | right id) -> the token whose text is the two texts joined: every way of
  // cutting a token into two tokens. Lets merging look pairs of tokens up by id.
  boost::unordered_flat_map<std::uint64_t, std::int32_t> token_pairs;
  std::array<std::int32_t, 256> single_byte_tokens{};  // the token whose text is that one byte

  // bpe
  MergeMap merges;
  std::array<std::int32_t, 256> byte_char_tokens{};  // byte -> token of its alphabet character
  std::shared_ptr<const RegexSplitter> splitter;
  bool ignore_merges = false;

  std::optional<std::int32_t> find(std::string_view text) const {
    const auto it = ids.find(text);
    if (it == ids.end()) return std::nullopt;
    return it->second;
  }
};

}  // namespace lpx::core::detail
