// The text in which a model calls tools, read from its chat template. Each family was trained
// on its own: Hermes-style <tool_call> tags around JSON (Qwen2.5, Qwen3, Hermes, SmolLM3), bare
// JSON (Llama 3.x), a JSON list after <|tool_call|> (Granite 3.x, Phi-4-mini). A template that
// renders no tools (SmolLM2, Gemma) gets them described in a system message (the first user
// message where it takes no system role), and its model answers in the Hermes form under that
// description (docs/structured-output.md).
#pragma once

#include <string_view>

namespace lpx::openai {

enum class ToolSyntax {
  kDescribedHermes,  // the template knows no tools: a system message describes them, Hermes calls
  kHermes,           // the template renders `tools`; calls are <tool_call>{"name", "arguments"}</tool_call>
  kLlama3Json,       // the template renders `tools`; a call is {"name", "parameters"}
  kGranite,          // the template renders `tools`; calls are <|tool_call|>[{"name", "arguments"}, ...]
  kPhi4Mini,         // tools ride in the system message's `tools` string; <|tool_call|>[...]<|/tool_call|>
};

// The syntax of the template whose source is `chat_template` (empty: no template).
ToolSyntax detect_tool_syntax(std::string_view chat_template);

// Whether the template takes a system message: Gemma 2's raises "System role not supported".
bool template_takes_system_role(std::string_view chat_template);

// "hermes", "llama3_json", ... for logs and docs.
const char* tool_syntax_name(ToolSyntax syntax);

}  // namespace lpx::openai
