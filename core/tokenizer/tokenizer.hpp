// Text <-> token ids for the models LPX runs, exact to the token with llama.cpp's tokenizer:
// SentencePiece-style BPE ("llama" vocabularies) and byte-level BPE ("gpt2" vocabularies, with the
// pre-tokenizer regexes tokenizer.ggml.pre selects). See docs/tokenizers.md.
//
// Thread safety: a Tokenizer is immutable once created. encode, decode and piece may run
// concurrently on one Tokenizer from any number of threads (each call keeps its own scratch and
// PCRE2 match data). An IncrementalDecoder is one stream's state: one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocabulary.hpp"
#include "util/expected.hpp"

namespace lpx::core {

namespace detail {
struct TokenizerTables;
}

class Tokenizer {
 public:
  struct EncodeOptions {
    bool add_bos = true;  // prepend BOS if the vocabulary says so (add_bos_token)
    bool add_eos = true;  // append EOS if the vocabulary says so (add_eos_token)
    // Control and unknown tokens written in the text ("<|im_start|>") become those tokens,
    // longest first. Off: they are plain text. User-defined tokens are matched either way.
    bool parse_special = false;
  };

  // Checks everything a model file could get wrong (see docs/tokenizers.md) and builds the tables:
  // unique token texts, merges over existing tokens, well-formed byte tokens, known pre-tokenizer.
  static Expected<std::unique_ptr<Tokenizer>> create(Vocabulary vocabulary);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Fails only on input no token can represent (a byte without any byte token in an spm vocabulary
  // that also lacks an unknown token) or a PCRE2 resource error.
  Expected<std::vector<std::int32_t>> encode(std::string_view text, EncodeOptions options) const;
  Expected<std::vector<std::int32_t>> encode(std::string_view text) const {
    return encode(text, EncodeOptions{});
  }

  // The bytes `ids` stand for (not necessarily valid UTF-8 when the ids end mid-character). Control
  // and unknown tokens are left out unless `render_special`. For spm vocabularies with a space
  // prefix, the first id's leading space is dropped (as llama.cpp's detokenizer does).
  // Fails on an id outside the vocabulary.
  Expected<std::string> decode(std::span<const std::int32_t> ids, bool render_special = false) const;

  // What one token decodes to on its own (no space-prefix removal); empty for tokens that do not
  // render. The view lives as long as the tokenizer. Fails on an id outside the vocabulary.
  Expected<std::string_view> piece(std::int32_t id, bool render_special = false) const;

  std::int32_t vocab_size() const noexcept;
  std::optional<std::int32_t> bos() const noexcept;
  std::optional<std::int32_t> eos() const noexcept;
  // End of turn, if the vocabulary has one: tokenizer.ggml.eot_token_id, else found by its text
  // (<|im_end|>, <|eot_id|>, <|end|>, <end_of_turn>, <|endoftext|>...) as llama.cpp does.
  std::optional<std::int32_t> eot() const noexcept;
  // Tokens that end generation: EOS, EOT, EOM and the end-of-text / fill-in-the-middle tokens
  // llama.cpp recognises by their text.
  bool is_end_of_generation(std::int32_t id) const noexcept;
  // Control tokens (including those the end-of-generation rules promoted).
  bool is_control(std::int32_t id) const noexcept;
  const Vocabulary& vocabulary() const noexcept;

 private:
  friend class IncrementalDecoder;
  explicit Tokenizer(std::unique_ptr<const detail::TokenizerTables> tables);
  std::unique_ptr<const detail::TokenizerTables> tables_;
};

// Turns ids into text one at a time, for streaming: push() returns only whole UTF-8 characters and
// holds back the bytes of a character that is not complete yet; flush() returns what is held.
// Concatenating every push() and a final flush() gives exactly Tokenizer::decode of all the ids.
// The tokenizer must outlive the decoder.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool render_special = false);
  // Fails on an id outside the vocabulary (the decoder's state is unchanged).
  Expected<std::string> push(std::int32_t id);
  // The held bytes (an incomplete character, or nothing); the stream continues after it.
  std::string flush();
  // Starts a new stream (the next id is "first" again for the spm space-prefix rule).
  void reset();

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  bool first_ = true;
  std::string held_;
};

}  // namespace lpx::core
