#include "tokenizer/utf8.hpp"

#include "lpx/cpp/utf8.hpp"

namespace lpx::core::detail {
namespace {

bool is_continuation(unsigned char byte) noexcept { return (byte & 0xC0) == 0x80; }

// Range the second byte of a sequence must fall in, given its lead byte (Unicode table 3-7).
// Returns false for bytes that cannot lead a well-formed sequence.
bool second_byte_range(unsigned char lead, unsigned char& low, unsigned char& high) noexcept {
  low = 0x80;
  high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) return true;
  if (lead == 0xE0) { low = 0xA0; return true; }
  if (lead >= 0xE1 && lead <= 0xEC) return true;
  if (lead == 0xED) { high = 0x9F; return true; }
  if (lead >= 0xEE && lead <= 0xEF) return true;
  if (lead == 0xF0) { low = 0x90; return true; }
  if (lead >= 0xF1 && lead <= 0xF3) return true;
  if (lead == 0xF4) { high = 0x8F; return true; }
  return false;
}

// Length of the well-formed sequence at `text[at]`, or 0 when it is ill-formed or cut short.
std::size_t well_formed_length(std::string_view text, std::size_t at) noexcept {
  const utf8::Sequence s = utf8::next_sequence(text, at);
  return s.well_formed ? s.length : 0;
}

// Whether the sequence at `text[at]` is structurally complete the way llama.cpp checks it: a lead
// byte followed by enough continuation bytes (values are not checked). Returns its length or 0.
std::size_t structural_length(std::string_view text, std::size_t at) noexcept {
  const auto lead = static_cast<unsigned char>(text[at]);
  std::size_t length = 0;
  if (lead < 0x80) return 1;
  if (lead < 0xC0) return 0;
  if (lead < 0xE0) length = 2;
  else if (lead < 0xF0) length = 3;
  else if (lead < 0xF8) length = 4;
  else return 0;
  if (text.size() - at < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if (!is_continuation(static_cast<unsigned char>(text[at + k]))) return 0;
  }
  return length;
}

}  // namespace

void sanitize_utf8(std::string_view text, std::string& out) {
  out.clear();
  out.reserve(text.size() + 8);
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t good = well_formed_length(text, at);
    if (good != 0) {
      out.append(text.data() + at, good);
      at += good;
      continue;
    }
    out.append("\xEF\xBF\xBD");
    const std::size_t structural = structural_length(text, at);
    at += structural == 0 ? 1 : structural;
  }
}

std::size_t incomplete_utf8_tail(std::string_view text) noexcept {
  // Walk back over at most three continuation bytes to the byte that would lead them.
  const std::size_t size = text.size();
  for (std::size_t back = 1; back <= 3 && back <= size; ++back) {
    const auto byte = static_cast<unsigned char>(text[size - back]);
    if (is_continuation(byte)) continue;
    unsigned char low = 0;
    unsigned char high = 0;
    if (!second_byte_range(byte, low, high)) return 0;
    const std::size_t length = byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4;
    if (back >= length) return 0;  // complete (or too long: not a prefix)
    if (back >= 2) {
      const auto second = static_cast<unsigned char>(text[size - back + 1]);
      if (second < low || second > high) return 0;
    }
    return back;
  }
  return 0;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace lpx::core::detail
