// Pre-tokenizers of byte-level BPE models: the regex sets that split text into words before BPE,
// selected by tokenizer.ggml.pre, and a PCRE2 splitter for them. Internal to lpx_tokenizer.
//
// Splitting follows llama.cpp: the regexes run one after another; each one runs inside every piece
// the previous ones produced (so lookarounds and `$` stop at the piece's edges), and both its
// matches and the text between them become pieces.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "util/expected.hpp"

namespace lpx::core::detail {

struct PreTokenizerSpec {
  std::vector<std::string_view> names;     // tokenizer.ggml.pre values that select it
  std::vector<std::string_view> patterns;  // as the model's tokenizer (llama.cpp) writes them
  bool ignore_merges = false;  // a word that is itself a token is not merged (Llama 3)
  bool add_bos = false;        // default for tokenizer.ggml.add_bos_token
};

// The spec selected by `name`, or nullptr when unknown.
const PreTokenizerSpec* find_pre_tokenizer(std::string_view name) noexcept;
// Every known name, sorted, comma-separated (for error messages).
std::string known_pre_tokenizers();

// A pattern rewritten for PCRE2 in UTF+UCP mode: \s and \S become explicit classes of Unicode's
// White_Space characters (PCRE2's own \s also takes U+180E, which Unicode, llama.cpp and Hugging
// Face do not count as space). \S inside a [...] class is not supported (no pattern uses it).
// With `unicode_15_classes`, \p{L}, \p{N}, \p{P}, \p{S} and \p{M} also take the code points
// Unicode 15.0 and 15.1 added to them, so that the classes are Unicode 15.1's, as llama.cpp's,
// whatever PCRE2's tables know.
std::string adapt_pattern_for_pcre2(std::string_view pattern, bool unicode_15_classes = true);

// Whether well-formed UTF-8 `text` holds a code point that Unicode 15.0 or 15.1 added to the
// letters, numbers, punctuation, symbols or marks: only then can the widened classes split
// differently.
bool has_unicode_15_addition(std::string_view text) noexcept;

// Compiled regexes (PCRE2, UTF + UCP, JIT when available), immutable and shareable across threads;
// each split() call brings its own match data. Each pattern is compiled twice, with PCRE2's own
// classes and with the Unicode 15 ones; split() takes the second set only for text that needs it.
class RegexSplitter {
 public:
  class MatchData;  // per-call PCRE2 match data

  static Expected<std::shared_ptr<const RegexSplitter>> compile(
      const std::vector<std::string_view>& patterns);
  ~RegexSplitter();

  std::unique_ptr<MatchData, void (*)(MatchData*)> make_match_data() const;
  // Splits `text` (well-formed UTF-8) into `out` (views into `text`), reusing `spare`.
  // Fails only when PCRE2 itself reports an error (e.g. a resource limit).
  Expected<bool> split(std::string_view text, MatchData& match_data,
                       std::vector<std::string_view>& out,
                       std::vector<std::string_view>& spare) const;

 private:
  struct Regex;
  RegexSplitter() = default;
  std::vector<std::unique_ptr<Regex>> regexes_;
  std::vector<std::unique_ptr<Regex>> widened_;  // empty when no pattern names a widened class
};

}  // namespace lpx::core::detail
