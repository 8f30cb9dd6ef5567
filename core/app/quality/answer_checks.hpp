// What `lpx-pipeline quality` looks for in one answer: the faults users find when they repeat a
// prompt against a freshly converted or quantized model. Pure functions over the answer's text
// and token ids, so that each is tested on crafted answers (tests/eval/answer_checks_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::core::quality {

struct Answer {
  std::string text;
  std::vector<std::int32_t> tokens;
  bool ended_by_model = false;  // the model's end-of-generation token (not max_tokens)
};

struct AnswerFaults {
  bool empty = false;         // nothing but whitespace
  bool bad_utf8 = false;      // invalid UTF-8, or U+FFFD (what a decoder writes for bytes it lost)
  bool special_leak = false;  // the text of a control token (<|im_end|>, <eos>...) in the text
  bool early_stop = false;    // the model ended it mid-sentence (see ends_naturally)
  bool loop = false;          // it ends in one span of tokens repeated over and over
};

// `specials`: the texts of the vocabulary's control tokens.
AnswerFaults check_answer(const Answer& answer, const std::vector<std::string>& specials);

// Whether `text` ends where an answer may end: after sentence punctuation (any script's), a
// closing bracket or quote, a code fence, a line break, or an emoji.
bool ends_naturally(std::string_view text);

// Whether `tokens` ends in at least kLoopRepeats consecutive copies of one block of 1 to
// kLoopLongestBlock tokens that cover at least kLoopShortestRun tokens ("a a a ... a").
inline constexpr std::size_t kLoopRepeats = 3;
inline constexpr std::size_t kLoopLongestBlock = 64;
inline constexpr std::size_t kLoopShortestRun = 24;
bool ends_in_loop(const std::vector<std::int32_t>& tokens);

}  // namespace lpx::core::quality
