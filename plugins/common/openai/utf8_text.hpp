// UTF-8 helpers for text that came out of the tokenizer: a token's piece may be part of a
// character, but JSON strings must be whole, valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace lpx::openai {

// True when `bytes` is well-formed UTF-8.
bool is_valid_utf8(std::string_view bytes);

// `bytes` with every ill-formed sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view bytes);

}  // namespace lpx::openai
