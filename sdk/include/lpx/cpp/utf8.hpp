// UTF-8 checks and repair for text that came out of a tokenizer.
//
// A token's piece may be part of a character (byte-fallback and byte-level vocabularies split
// characters across tokens), and a model may pick bytes that never form one. Text shown to a user
// or put in JSON must be well-formed: `repair` replaces each ill-formed part with U+FFFD the way
// the Unicode Standard recommends (§3.9, "U+FFFD Substitution of Maximal Subparts"), which is
// also what Python's and the WHATWG decoders do: one U+FFFD for each longest run of bytes that
// starts a well-formed character but does not finish it (`E5 93` cut short: one), and one for
// every other stray byte (an overlong `C0 AF`: two).
//
// Header-only; only `repair` and `append_repaired` allocate (for their output); safe from any
// thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lpx::utf8 {

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";

// What starts at a position: `length` bytes that either form one well-formed
// character, or are the maximal subpart that must become a single U+FFFD (at
// least one byte).
struct Sequence {
  std::size_t length;
  bool well_formed;
};

// The sequence at `text[at]`; `at` must be inside `text`. Byte ranges from Unicode table 3-7.
constexpr Sequence next_sequence(std::string_view text, std::size_t at) noexcept {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[at + k]); };
  const unsigned char lead = byte(0);
  if (lead < 0x80) return {1, true};
  std::size_t length = 0;
  unsigned char low = 0x80;  // the range of the second byte; later ones are 80..BF
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // no overlong forms
    if (lead == 0xED) high = 0x9F;  // no surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // no overlong forms
    if (lead == 0xF4) high = 0x8F;  // nothing past U+10FFFF
  } else {
    return {1, false};  // a continuation byte, C0, C1 or F5..FF: never starts a character
  }
  std::size_t k = 1;
  for (; k < length && at + k < text.size(); ++k) {
    const unsigned char b = byte(k);
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return {k, false};
  }
  return {k, k == length};
}

// True when `text` is well-formed UTF-8.
constexpr bool is_well_formed(std::string_view text) noexcept {
  for (std::size_t at = 0; at < text.size();) {
    const Sequence s = next_sequence(text, at);
    if (!s.well_formed) return false;
    at += s.length;
  }
  return true;
}

// Appends `text` to `out` with every maximal ill-formed subpart replaced by
// U+FFFD.
inline void append_repaired(std::string& out, std::string_view text) {
  std::size_t copied = 0;  // well-formed runs are appended whole
  for (std::size_t at = 0; at < text.size();) {
    const Sequence s = next_sequence(text, at);
    if (!s.well_formed) {
      out.append(text.substr(copied, at - copied));
      out.append(kReplacementCharacter);
      copied = at + s.length;
    }
    at += s.length;
  }
  out.append(text.substr(copied));
}

// `text` with every maximal ill-formed subpart replaced by U+FFFD.
inline std::string repair(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_repaired(out, text);
  return out;
}

}  // namespace lpx::utf8
