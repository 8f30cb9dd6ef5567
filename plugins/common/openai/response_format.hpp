// The JSON shapes of answers: OpenAI completions and chat (whole responses and stream chunks)
// and the simple /generate API. Pure functions of what the sinks collected.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <boost/json.hpp>

#include "generation_output.hpp"
#include "generation_request.hpp"
#include "tool_call_parser.hpp"

namespace lpx::openai {

struct ResponseContext {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string id;  // "cmpl-…" / "chatcmpl-…"
  std::int64_t created = 0;
  std::string model;
  bool logprobs = false;
  std::uint32_t n = 1;  // choices per prompt, for counting prompt tokens once
  ToolUse tools;        // chat: answers are read for calls when tools.active()
};

// A random id with `prefix`: "chatcmpl-…", "batch_req_…" (16 hex digits).
std::string random_id(const char* prefix);

ResponseContext make_response_context(const GenerationRequest& request, const std::string& model);

// "length" or "stop"; empty for outcomes that are not a normal finish.
const char* finish_reason_name(lpx_finish_reason reason);
// The same for an answer that made tool calls: "tool_calls" where it ended of itself.
const char* finish_reason_name(lpx_finish_reason reason, bool called_tools);

// The message's tool_calls, each with a fresh id ("call_…").
boost::json::array tool_calls_json(const std::vector<ParsedToolCall>& calls);

// The logprobs object of `tokens` (null when the request did not ask). `text_offset` is where
// the first token's text starts in the choice's text (completions' text_offset).
boost::json::value logprobs_json(const ResponseContext& context,
                                 const std::vector<TokenOutput>& tokens, std::size_t text_offset);

boost::json::object usage_json(const ResponseContext& context,
                               const std::vector<ChoiceOutcome>& outcomes);

// One stream chunk of `choice`; `finish` empty while it runs. /generate: {"text": …}.
boost::json::object chunk_json(const ResponseContext& context, std::uint32_t choice,
                               const std::string& text, boost::json::value logprobs,
                               const char* finish);
// Chat: the chunk that announces the tool calls of `choice` whole, as OpenAI's stream deltas
// carry them ({"tool_calls": [{"index", "id", "type", "function": {"name", "arguments"}}]}).
boost::json::object tool_calls_chunk_json(const ResponseContext& context, std::uint32_t choice,
                                          const std::vector<ParsedToolCall>& calls);
// Chat only: the first chunk of a choice, announcing the assistant role.
boost::json::object role_chunk_json(const ResponseContext& context, std::uint32_t choice);
// The usage-only chunk (stream_options.include_usage); /generate: its final event.
boost::json::object usage_chunk_json(const ResponseContext& context,
                                     const std::vector<ChoiceOutcome>& outcomes);

struct CollectedChoice {
  std::string text;
  std::vector<TokenOutput> logprob_tokens;
  ChoiceOutcome outcome;
};
boost::json::object full_response_json(const ResponseContext& context,
                                       const std::vector<CollectedChoice>& choices);

}  // namespace lpx::openai
