// GPT-2's byte-level alphabet: every byte maps to one printable code point, so any byte string is a
// string of "characters" a BPE vocabulary can hold. Bytes 0x21-0x7E, 0xA1-0xAC and 0xAE-0xFF map to
// themselves; the other 68 map, in byte order, to U+0100 onwards. Internal to lpx_tokenizer.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace lpx::core::detail {

class ByteLevel {
 public:
  static const ByteLevel& instance();

  // The UTF-8 text of the code point that stands for `byte`.
  std::string_view encode(std::uint8_t byte) const noexcept { return encoded_[byte]; }
  // Appends the alphabet form of every byte of `raw`.
  void encode(std::string_view raw, std::string& out) const;
  // The byte a code point stands for, or -1 when it is not in the alphabet.
  int decode(char32_t code_point) const noexcept {
    return code_point < decoded_.size() ? decoded_[code_point] : -1;
  }
  // Appends the bytes that `text` (UTF-8 in the alphabet) stands for. A code point outside the
  // alphabet is copied through as its own UTF-8; returns false when that happened.
  bool decode(std::string_view text, std::string& out) const;

 private:
  ByteLevel();
  std::array<std::string, 256> encoded_;
  std::array<std::int16_t, 0x144> decoded_{};  // code points up to U+0143
};

}  // namespace lpx::core::detail
