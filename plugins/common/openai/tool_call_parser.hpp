// Reading tool calls out of a model's answer, in its family's syntax (tool_syntax.hpp). A call
// counts only when it names an offered function and its arguments are a JSON object; an answer
// with anything else where a call should be (broken JSON, an unknown name) is all content, as
// the model wrote it, so nothing it said is lost. A last call cut off by max_tokens stays
// content beside the whole calls before it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tool_use.hpp"

namespace lpx::openai {

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // a JSON object, as text
};

struct ParsedAnswer {
  std::string content;  // the text around the calls, untrimmed
  std::vector<ParsedToolCall> calls;
};

ParsedAnswer parse_tool_calls(std::string_view answer, const ToolUse& tools);

// Where the content of an answer with tools starts: whitespace before it is not content (the
// whole answer's content is trimmed, and a stream holds that whitespace back). answer.size()
// when there is none yet.
std::size_t content_start(std::string_view answer);

// While an answer streams: the length of its start that is content whatever follows. The rest
// may be (the start of) a call and is held back until it can be parsed. Never decreases as the
// answer grows.
std::size_t content_before_calls(std::string_view answer_so_far, const ToolUse& tools);

}  // namespace lpx::openai
