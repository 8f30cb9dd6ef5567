#include "tokenizer/byte_level.hpp"

#include "tokenizer/utf8.hpp"

namespace lpx::core::detail {

ByteLevel::ByteLevel() {
  decoded_.fill(-1);
  char32_t next_extra = 0x100;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const char32_t cp = printable ? static_cast<char32_t>(b) : next_extra++;
    append_utf8(encoded_[static_cast<std::size_t>(b)], cp);
    decoded_[cp] = static_cast<std::int16_t>(b);
  }
}

const ByteLevel& ByteLevel::instance() {
  static const ByteLevel table;
  return table;
}

void ByteLevel::encode(std::string_view raw, std::string& out) const {
  for (const char c : raw) out += encoded_[static_cast<std::uint8_t>(c)];
}

bool ByteLevel::decode(std::string_view text, std::string& out) const {
  bool all_known = true;
  std::size_t at = 0;
  while (at < text.size()) {
    const auto lead = static_cast<unsigned char>(text[at]);
    std::size_t length = utf8_sequence_length(lead);
    if (length > text.size() - at) length = text.size() - at;
    char32_t cp = 0;
    if (length == 1) {
      cp = lead;
    } else if (length == 2) {
      cp = (static_cast<char32_t>(lead & 0x1F) << 6) |
           (static_cast<char32_t>(static_cast<unsigned char>(text[at + 1])) & 0x3F);
    } else {
      cp = 0x110000;  // beyond the alphabet (which ends at U+0143)
    }
    const int byte = length == 1 && lead >= 0x80 ? -1 : decode(cp);
    if (byte >= 0) {
      out.push_back(static_cast<char>(byte));
    } else {
      out.append(text.data() + at, length);
      all_known = false;
    }
    at += length;
  }
  return all_known;
}

}  // namespace lpx::core::detail
