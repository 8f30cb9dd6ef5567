#include "chat_template/unicode.hpp"

#include <array>

namespace lpx::core::jinja::unicode {
namespace {

constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b <-> U+DC00 + b (b >= 0x80)

struct Range {
  char32_t first;
  char32_t last;
};

// Upper/lower pairs that differ by a fixed offset over a whole range.
struct OffsetRange {
  char32_t upper_first;
  char32_t upper_last;
  char32_t offset;  // lower = upper + offset
};

constexpr std::array<OffsetRange, 11> kOffsetRanges{{
    {0x41, 0x5A, 0x20},      // ASCII
    {0xC0, 0xD6, 0x20},      // Latin-1
    {0xD8, 0xDE, 0x20},      // Latin-1 (skips the multiplication sign)
    {0x391, 0x3A1, 0x20},    // Greek
    {0x3A3, 0x3AB, 0x20},    // Greek (skips the reserved U+03A2)
    {0x388, 0x38A, 0x25},    // Greek with tonos
    {0x38E, 0x38F, 0x3F},    // Greek with tonos
    {0x410, 0x42F, 0x20},    // Cyrillic
    {0x400, 0x40F, 0x50},    // Cyrillic
    {0x531, 0x556, 0x30},    // Armenian
    {0xFF21, 0xFF3A, 0x20},  // fullwidth Latin
}};

// Ranges where upper and lower case alternate: upper at even (or odd) code points.
struct AlternatingRange {
  char32_t first;
  char32_t last;
  bool upper_is_even;
};

constexpr std::array<AlternatingRange, 8> kAlternatingRanges{{
    {0x100, 0x12F, true},
    {0x132, 0x137, true},
    {0x139, 0x148, false},
    {0x14A, 0x177, true},
    {0x179, 0x17E, false},
    {0x460, 0x481, true},
    {0x48A, 0x4BF, true},
    {0x4D0, 0x52F, true},
}};

// Single pairs that fit no range: {upper, lower}.
constexpr std::array<std::array<char32_t, 2>, 4> kSinglePairs{{
    {0x178, 0xFF},   // Y with diaeresis
    {0x386, 0x3AC},  // Greek alpha with tonos
    {0x38C, 0x3CC},  // Greek omicron with tonos
    {0x4C0, 0x4CF},  // Cyrillic palochka
}};

constexpr std::array<Range, 10> kSpaces{{{0x09, 0x0D},
                                         {0x1C, 0x20},
                                         {0x85, 0x85},
                                         {0xA0, 0xA0},
                                         {0x1680, 0x1680},
                                         {0x2000, 0x200A},
                                         {0x2028, 0x2029},
                                         {0x202F, 0x202F},
                                         {0x205F, 0x205F},
                                         {0x3000, 0x3000}}};

// Control, format, separator, surrogate and private-use code points (Python prints them escaped).
constexpr std::array<Range, 27> kNotPrintable{
    {{0x00, 0x1F},       {0x7F, 0xA0},       {0xAD, 0xAD},       {0x600, 0x605},
     {0x61C, 0x61C},     {0x6DD, 0x6DD},     {0x70F, 0x70F},     {0x890, 0x891},
     {0x8E2, 0x8E2},     {0x1680, 0x1680},   {0x180E, 0x180E},   {0x2000, 0x200F},
     {0x2028, 0x202F},   {0x205F, 0x2064},   {0x2066, 0x206F},   {0x3000, 0x3000},
     {0xD800, 0xF8FF},   {0xFDD0, 0xFDEF},   {0xFEFF, 0xFEFF},   {0xFFF9, 0xFFFB},
     {0xFFFE, 0xFFFF},   {0x110BD, 0x110BD}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A},
     {0xE0001, 0xE0001}, {0xE0020, 0xE007F}, {0xF0000, 0x10FFFF}}};

template <std::size_t N>
bool in_ranges(const std::array<Range, N>& ranges, char32_t c) {
  for (const Range& range : ranges) {
    if (c >= range.first && c <= range.last) return true;
  }
  return false;
}

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

char32_t decode(std::string_view text, std::size_t& pos) {
  const auto lead = static_cast<unsigned char>(text[pos]);
  if (lead < 0x80) {
    ++pos;
    return lead;
  }
  struct Form {
    unsigned char mask, value, payload;
    std::size_t extra;
    char32_t minimum;
  };
  constexpr std::array<Form, 3> kForms{
      {{0xE0, 0xC0, 0x1F, 1, 0x80}, {0xF0, 0xE0, 0x0F, 2, 0x800}, {0xF8, 0xF0, 0x07, 3, 0x10000}}};
  std::size_t extra = 0;
  char32_t code = 0;
  char32_t minimum = 0;
  for (const Form& form : kForms) {
    if ((lead & form.mask) == form.value) {
      extra = form.extra;
      code = lead & form.payload;
      minimum = form.minimum;
      break;
    }
  }
  bool valid = extra > 0 && pos + extra < text.size();
  for (std::size_t i = 1; valid && i <= extra; ++i) {
    if (!is_continuation(static_cast<unsigned char>(text[pos + i]))) {
      valid = false;
    } else {
      code = (code << 6) | (static_cast<unsigned char>(text[pos + i]) & 0x3F);
    }
  }
  // Overlong forms, UTF-16 surrogates and values past U+10FFFF are not valid UTF-8.
  if (valid && (code < minimum || (code >= 0xD800 && code <= 0xDFFF) || code > 0x10FFFF)) {
    valid = false;
  }
  if (!valid) {
    ++pos;
    return kEscapeBase + lead;
  }
  pos += extra + 1;
  return code;
}

void append(std::string& out, char32_t c) {
  if (c >= kEscapeBase + 0x80 && c <= kEscapeBase + 0xFF) {
    out.push_back(static_cast<char>(c - kEscapeBase));
  } else if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

std::u32string to_code_points(std::string_view text) {
  std::u32string result;
  result.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) result.push_back(decode(text, pos));
  return result;
}

std::string from_code_points(std::u32string_view code_points) {
  std::string result;
  result.reserve(code_points.size());
  for (char32_t c : code_points) append(result, c);
  return result;
}

std::size_t length(std::string_view text) {
  std::size_t count = 0;
  for (std::size_t pos = 0; pos < text.size(); ++count) decode(text, pos);
  return count;
}

bool is_ascii(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

bool is_space(char32_t c) { return in_ranges(kSpaces, c); }

bool is_printable(char32_t c) { return c == 0x20 || !in_ranges(kNotPrintable, c); }

bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }

char32_t to_lower(char32_t c) {
  for (const OffsetRange& range : kOffsetRanges) {
    if (c >= range.upper_first && c <= range.upper_last) return c + range.offset;
  }
  for (const AlternatingRange& range : kAlternatingRanges) {
    if (c >= range.first && c <= range.last && ((c % 2 == 0) == range.upper_is_even)) return c + 1;
  }
  for (const auto& pair : kSinglePairs) {
    if (c == pair[0]) return pair[1];
  }
  return c;
}

char32_t to_upper(char32_t c) {
  for (const OffsetRange& range : kOffsetRanges) {
    if (c >= range.upper_first + range.offset && c <= range.upper_last + range.offset) {
      return c - range.offset;
    }
  }
  for (const AlternatingRange& range : kAlternatingRanges) {
    if (c >= range.first && c <= range.last && ((c % 2 == 0) != range.upper_is_even)) return c - 1;
  }
  for (const auto& pair : kSinglePairs) {
    if (c == pair[1]) return pair[0];
  }
  if (c == 0x3C2) return 0x3A3;  // final sigma
  if (c == 0xB5) return 0x39C;   // micro sign
  return c;
}

bool is_upper(char32_t c) { return to_lower(c) != c; }
bool is_lower(char32_t c) { return to_upper(c) != c || c == 0xDF; }
bool is_cased(char32_t c) { return is_upper(c) || is_lower(c); }
bool is_alpha(char32_t c) { return is_cased(c) || (c >= 0x3B1 && c <= 0x3C9); }

std::string upper(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = decode(text, pos);
    if (c == 0xDF) {
      result += "SS";
    } else {
      append(result, to_upper(c));
    }
  }
  return result;
}

std::string lower(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (std::size_t pos = 0; pos < text.size();) append(result, to_lower(decode(text, pos)));
  return result;
}

}  // namespace lpx::core::jinja::unicode
