#include "tool_syntax.hpp"

namespace lpx::openai {
namespace {

bool has(std::string_view text, std::string_view what) { return text.find(what) != std::string_view::npos; }

}  // namespace

ToolSyntax detect_tool_syntax(std::string_view t) {
  // Markers each family's template writes; checked from the most specific.
  if (has(t, "<|tool|>") && has(t, "'tools'")) return ToolSyntax::kPhi4Mini;
  if (has(t, "<|tool_call|>") && has(t, "available_tools")) return ToolSyntax::kGranite;
  if (has(t, "<tool_call>") && has(t, "tools")) return ToolSyntax::kHermes;
  if (has(t, "<|python_tag|>") || (has(t, "ipython") && has(t, "\"parameters\"") && has(t, "tools"))) {
    return ToolSyntax::kLlama3Json;
  }
  return ToolSyntax::kDescribedHermes;
}

bool template_takes_system_role(std::string_view t) { return !has(t, "System role not supported"); }

const char* tool_syntax_name(ToolSyntax syntax) {
  switch (syntax) {
    case ToolSyntax::kDescribedHermes: return "hermes (tools described in a system message)";
    case ToolSyntax::kHermes: return "hermes";
    case ToolSyntax::kLlama3Json: return "llama3_json";
    case ToolSyntax::kGranite: return "granite";
    case ToolSyntax::kPhi4Mini: return "phi4_mini";
  }
  return "";
}

}  // namespace lpx::openai
