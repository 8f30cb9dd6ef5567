// UTF-8 and the few Unicode properties Python's str methods need. Python indexes strings by code
// point, so slicing, len() and reversing work on decoded code points here too.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lpx::core::jinja::unicode {

// Decodes the code point starting at `pos` and advances `pos`. A byte that does not start valid
// UTF-8 decodes to U+DC80..U+DCFF (Python's "surrogateescape"), which `append` turns back into
// the same byte, so malformed input survives a round trip instead of being rejected mid-render.
char32_t decode(std::string_view text, std::size_t& pos);
void append(std::string& out, char32_t code_point);

std::u32string to_code_points(std::string_view text);
std::string from_code_points(std::u32string_view code_points);
std::size_t length(std::string_view text);  // in code points
bool is_ascii(std::string_view text);

bool is_space(char32_t c);  // Python's str.isspace() (also what re's \s matches)
bool is_printable(
    char32_t c);            // Python's str.isprintable(); unassigned code points count as printable
bool is_digit(char32_t c);  // ASCII digits only
bool is_alpha(char32_t c);  // letters the case tables know, plus ASCII letters
bool is_upper(char32_t c);
bool is_lower(char32_t c);
bool is_cased(char32_t c);

// Simple case mapping for ASCII, Latin-1, Latin Extended-A, Greek, Cyrillic, Armenian and
// fullwidth Latin; other code points are returned unchanged.
char32_t to_upper(char32_t c);
char32_t to_lower(char32_t c);

// Whole-string conversions; upper() also applies the one common special case, 'ß' -> "SS".
std::string upper(std::string_view text);
std::string lower(std::string_view text);

}  // namespace lpx::core::jinja::unicode
