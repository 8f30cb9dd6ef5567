// UTF-8 helpers for the tokenizers. Internal to lpx_tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lpx::core::detail {

// Bytes in the UTF-8 sequence that `lead` starts, judged from its high nibble alone, the way
// llama.cpp's tokenizers split text into symbols (a stray continuation byte counts as 1).
inline std::size_t utf8_sequence_length(unsigned char lead) noexcept {
  static constexpr std::uint8_t kLength[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLength[lead >> 4];
}

// `text` with every ill-formed part replaced by U+FFFD, written to `out`. A byte that cannot start
// a structurally complete sequence becomes one U+FFFD and decoding resumes at the next byte (as in
// llama.cpp); a complete sequence that encodes an overlong form, a surrogate or a code point past
// U+10FFFF becomes one U+FFFD as a whole.
void sanitize_utf8(std::string_view text, std::string& out);

// Bytes at the end of `text` that are a proper prefix of a well-formed UTF-8 character (0 to 3):
// what a streaming decoder must hold back until more bytes arrive.
std::size_t incomplete_utf8_tail(std::string_view text) noexcept;

void append_utf8(std::string& out, char32_t code_point);

}  // namespace lpx::core::detail
