#include "tool_conversation.hpp"

namespace lpx::openai {
namespace {

namespace json = boost::json;

// {"name": "...", "arguments": {...}} of an OpenAI tool call (arguments as JSON text, validated),
// spaced as the model writes it under the grammar (tool_grammar.cpp).
std::string call_text(const json::value& call) {
  const json::object& function = call.at("function").as_object();
  std::string text = "{\"name\": ";
  text.append(json::serialize(function.at("name")))
      .append(", \"arguments\": ")
      .append(json::serialize(json::parse(function.at("arguments").as_string())))
      .append("}");
  return text;
}

// A past assistant turn's calls, written as the model writes them.
std::string calls_text(const json::array& calls, ToolSyntax syntax) {
  std::string text;
  if (syntax == ToolSyntax::kGranite || syntax == ToolSyntax::kPhi4Mini) {
    text = "<|tool_call|>[";
    for (std::size_t i = 0; i < calls.size(); ++i) text.append(i ? ", " : "").append(call_text(calls[i]));
    text += ']';
    if (syntax == ToolSyntax::kPhi4Mini) text += "<|/tool_call|>";
    return text;
  }
  for (const json::value& call : calls) {  // Hermes
    if (!text.empty()) text += "\n";
    text.append("<tool_call>\n").append(call_text(call)).append("\n</tool_call>");
  }
  return text;
}

std::string content_text(const json::object& m) {
  const json::value* c = m.if_contains("content");
  return c != nullptr && c->is_string() ? std::string(c->get_string()) : std::string();
}

// Whether the template renders calls and tool results itself.
bool template_renders_history(ToolSyntax syntax) {
  return syntax == ToolSyntax::kHermes || syntax == ToolSyntax::kLlama3Json;
}

json::array history(const json::array& messages, ToolSyntax syntax) {
  if (template_renders_history(syntax)) return messages;
  json::array out;
  for (const json::value& v : messages) {
    json::object m = v.as_object();
    const std::string role(m.at("role").as_string());
    if (const json::value* calls = m.if_contains("tool_calls"); role == "assistant" && calls && calls->is_array()) {
      std::string text = content_text(m);
      if (!text.empty()) text += '\n';
      text.append(calls_text(calls->as_array(), syntax));
      m["content"] = text;
      m.erase("tool_calls");
    } else if (role == "tool" && syntax == ToolSyntax::kGranite) {
      m["role"] = "tool_response";  // Granite's role for results
    } else if (role == "tool" && syntax == ToolSyntax::kDescribedHermes) {
      // A template that knows no tools may know no tool role either (Gemma allows only user and
      // assistant): results are the user's turn, consecutive ones in one message.
      std::string result = "<tool_response>\n";
      result.append(content_text(m)).append("\n</tool_response>");
      json::object* last = out.empty() ? nullptr : out.back().if_object();
      if (last != nullptr && last->contains("lpx_tool_results")) {
        std::string joined = content_text(*last);
        joined.append("\n").append(result);
        (*last)["content"] = joined;
      } else {
        out.push_back(json::object{{"role", "user"}, {"content", result}, {"lpx_tool_results", true}});
      }
      continue;
    }
    json::object* last = out.empty() ? nullptr : out.back().if_object();
    if (role == "user" && last != nullptr && last->contains("lpx_tool_results")) {
      // The user's next words join the results' turn: such templates want turns to alternate.
      std::string joined = content_text(*last);
      joined.append("\n\n").append(content_text(m));
      (*last)["content"] = joined;
      last->erase("lpx_tool_results");
      continue;
    }
    out.push_back(std::move(m));
  }
  for (json::value& v : out) v.as_object().erase("lpx_tool_results");
  return out;
}

// The conversation's system message, made (empty) at its start if it has none.
json::object& system_message(json::array& messages) {
  json::object* first = messages.empty() ? nullptr : messages.front().if_object();
  if (first == nullptr || first->at("role") != "system") {
    messages.insert(messages.begin(), json::object{{"role", "system"}, {"content", ""}});
  }
  return messages.front().as_object();
}

// The first user message (made at the start if there is none).
json::object& first_user_message(json::array& messages) {
  for (json::value& m : messages) {
    if (m.as_object().at("role") == "user") return m.as_object();
  }
  messages.insert(messages.begin(), json::object{{"role", "user"}, {"content", ""}});
  return messages.front().as_object();
}

}  // namespace

std::string described_tools_text(const ToolUse& tools) {
  std::string text =
      "You can call functions to answer. Each function is described by a JSON object on its own "
      "line inside <tools></tools>:\n<tools>";
  for (const json::value& d : tools.definitions()) text.append("\n").append(json::serialize(d));
  text +=
      "\n</tools>\n\nTo call a function, answer with a JSON object holding its name and its "
      "arguments inside <tool_call></tool_call> tags, one pair of tags per call:\n"
      "<tool_call>\n{\"name\": <function name>, \"arguments\": <arguments as a JSON object>}\n"
      "</tool_call>\nThe results come back inside <tool_response></tool_response> tags.";
  return text;
}

ToolConversation tool_conversation(const json::array& messages, const ToolUse& tools) {
  ToolConversation out;
  json::array conversation = history(messages, tools.syntax);
  if (tools.active()) {
    switch (tools.syntax) {
      case ToolSyntax::kDescribedHermes: {
        // After the system message's own text; where a template takes no system role (Gemma 2),
        // before the first user message's.
        const std::string described = described_tools_text(tools);
        json::object& host = tools.system_role ? system_message(conversation) : first_user_message(conversation);
        const std::string own = content_text(host);
        std::string text;
        if (tools.system_role) {
          text.append(own).append(own.empty() ? "" : "\n\n").append(described);
        } else {
          text.append(described).append(own.empty() ? "" : "\n\n").append(own);
        }
        host["content"] = text;
        break;
      }
      case ToolSyntax::kPhi4Mini: {
        // The template appends the system message's `tools` string between <|tool|> tags.
        json::array functions;
        for (const json::value& d : tools.definitions()) functions.push_back(d.at("function"));
        system_message(conversation)["tools"] = json::serialize(functions);
        break;
      }
      default:
        out.tools_json = json::serialize(tools.definitions());
    }
  }
  out.messages_json = json::serialize(conversation);
  return out;
}

}  // namespace lpx::openai
