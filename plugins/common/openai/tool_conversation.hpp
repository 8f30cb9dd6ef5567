// A chat's conversation as the model's template must receive it for tool calling: the tools
// offered where the family reads them (the template's `tools`, a system message's `tools`
// string, or a system message that describes them), and past calls and their results written
// the way the family was trained to see them when its template does not render them itself.
#pragma once

#include <string>

#include <boost/json.hpp>

#include "tool_use.hpp"

namespace lpx::openai {

struct ToolConversation {
  std::string messages_json;  // lpx_request.messages_json
  std::string tools_json;     // lpx_request.tools_json; empty: none
};

// `messages`: validated OpenAI messages (content a string or null; an assistant's tool_calls
// with `arguments` as JSON text; a tool message's tool_call_id).
ToolConversation tool_conversation(const boost::json::array& messages, const ToolUse& tools);

// The system text that describes `tools` to a model whose template knows none, and asks for
// Hermes-form calls.
std::string described_tools_text(const ToolUse& tools);

}  // namespace lpx::openai
