#include "tool_call_parser.hpp"

#include <algorithm>
#include <optional>

#include <boost/json.hpp>

namespace lpx::openai {
namespace {

namespace json = boost::json;

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kListOpen = "<|tool_call|>";  // Granite, Phi-4-mini
constexpr std::string_view kListClose = "<|/tool_call|>";  // Phi-4-mini
constexpr std::string_view kBareList = "[{\"name\"";          // a list whose marker was a special token
constexpr std::string_view kPythonTag = "<|python_tag|>";  // Llama 3.x

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

std::size_t skip_space(std::string_view text, std::size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  return pos;
}

bool starts_with(std::string_view text, std::size_t pos, std::string_view what) {
  return text.substr(pos, what.size()) == what;
}

// The JSON object or array that starts at `pos` (after spaces); `pos` moves past it.
std::optional<json::value> json_at(std::string_view text, std::size_t& pos) {
  const std::size_t start = skip_space(text, pos);
  if (start >= text.size() || (text[start] != '{' && text[start] != '[')) return std::nullopt;
  json::stream_parser parser;
  boost::system::error_code error;
  const std::size_t used = parser.write_some(text.data() + start, text.size() - start, error);
  if (error || !parser.done()) return std::nullopt;
  pos = start + used;
  return parser.release();
}

// {"name": <offered>, "arguments" | "parameters": {...}} as a call.
std::optional<ParsedToolCall> call_from(const json::value& v, const std::vector<std::string>& names) {
  const json::object* o = v.if_object();
  const json::value* name = o ? o->if_contains("name") : nullptr;
  if (name == nullptr || !name->is_string() ||
      std::find(names.begin(), names.end(), name->get_string()) == names.end()) {
    return std::nullopt;
  }
  const json::value* arguments = o->if_contains("arguments");
  if (arguments == nullptr) arguments = o->if_contains("parameters");
  ParsedToolCall call{std::string(name->get_string()), "{}"};
  if (arguments == nullptr) return call;
  if (arguments->is_object()) {
    call.arguments = json::serialize(*arguments);
  } else if (arguments->is_string()) {  // some models write the arguments as JSON text
    boost::system::error_code error;
    const json::value parsed = json::parse(arguments->get_string(), error);
    if (error || !parsed.is_object()) return std::nullopt;
    call.arguments = json::serialize(parsed);
  } else {
    return std::nullopt;
  }
  return call;
}

// Calls from one JSON value: an object is one call, an array a list of them.
bool add_calls(const json::value& v, const std::vector<std::string>& names, std::vector<ParsedToolCall>& calls) {
  if (const json::array* list = v.if_array()) {
    if (list->empty()) return false;
    for (const json::value& item : *list) {
      if (!add_calls(item, names, calls) || item.is_array()) return false;
    }
    return true;
  }
  auto call = call_from(v, names);
  if (call) calls.push_back(std::move(*call));
  return call.has_value();
}

// <tool_call>{...}</tool_call> blocks anywhere in the text. The last block may be cut off (the
// answer reached max_tokens): the calls before it count, and its text stays content.
std::optional<ParsedAnswer> hermes(std::string_view text, const std::vector<std::string>& names) {
  ParsedAnswer out;
  std::size_t pos = 0;
  for (std::size_t open; (open = text.find(kHermesOpen, pos)) != std::string_view::npos;) {
    out.content += text.substr(pos, open - pos);
    std::size_t p = open + kHermesOpen.size();
    const auto value = json_at(text, p);
    if (!value && text.find(kHermesClose, open) == std::string_view::npos) {
      out.content += text.substr(open);
      return out;
    }
    if (!value || value->is_array() || !add_calls(*value, names, out.calls)) return std::nullopt;
    p = skip_space(text, p);
    if (starts_with(text, p, kHermesClose)) {
      p += kHermesClose.size();
    } else if (p != text.size()) {
      return std::nullopt;
    }
    pos = p;
  }
  out.content += text.substr(pos);
  return out;
}

// The whole answer is calls: {...} or several separated by ';' (Llama 3.x), after an optional
// <|python_tag|>.
std::optional<ParsedAnswer> llama3(std::string_view text, const std::vector<std::string>& names) {
  ParsedAnswer out;
  std::size_t pos = skip_space(text, 0);
  if (starts_with(text, pos, kPythonTag)) pos += kPythonTag.size();
  while (true) {
    const auto value = json_at(text, pos);
    if (!value || value->is_array() || !add_calls(*value, names, out.calls)) return std::nullopt;
    pos = skip_space(text, pos);
    if (pos == text.size()) return out;
    if (text[pos] != ';') return std::nullopt;
    pos = skip_space(text, pos + 1);
    if (pos == text.size()) return out;  // a trailing ';'
  }
}

// Where the next list of calls starts at or after `from`: its <|tool_call|> marker, or, as the
// marker is a special token that an answer's text may not carry, a bare `[{"name"`.
std::size_t next_list(std::string_view text, std::size_t from) {
  return std::min(text.find(kListOpen, from), text.find(kBareList, from));
}

// <|tool_call|>[{...}, ...] lists (Granite; Phi-4-mini closes each with <|/tool_call|>), with
// text around them. The last list may be cut off, as in hermes().
std::optional<ParsedAnswer> listed(std::string_view text, const std::vector<std::string>& names) {
  ParsedAnswer out;
  std::size_t pos = 0;
  for (std::size_t open; (open = next_list(text, pos)) != std::string_view::npos;) {
    out.content += text.substr(pos, open - pos);
    std::size_t p = starts_with(text, open, kListOpen) ? open + kListOpen.size() : open;
    const auto value = json_at(text, p);
    if (!value && text.find(kListClose, open) == std::string_view::npos) {
      out.content += text.substr(open);
      return out;
    }
    if (!value || !add_calls(*value, names, out.calls)) return std::nullopt;
    p = skip_space(text, p);
    if (starts_with(text, p, kListClose)) p += kListClose.size();
    pos = p;
  }
  out.content += text.substr(pos);
  return out;
}

// The length of the longest end of `text` that begins `marker` (and is shorter than it).
std::size_t partial_marker(std::string_view text, std::string_view marker) {
  for (std::size_t n = std::min(text.size(), marker.size() - 1); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) return n;
  }
  return 0;
}

std::size_t before_marker(std::string_view text, std::string_view marker) {
  const std::size_t at = text.find(marker);
  return at != std::string_view::npos ? at : text.size() - partial_marker(text, marker);
}

}  // namespace

ParsedAnswer parse_tool_calls(std::string_view answer, const ToolUse& tools) {
  const std::vector<std::string> names = tools.names();
  std::optional<ParsedAnswer> parsed;
  switch (tools.syntax) {
    case ToolSyntax::kLlama3Json: parsed = llama3(answer, names); break;
    case ToolSyntax::kGranite:
    case ToolSyntax::kPhi4Mini: parsed = listed(answer, names); break;
    default: parsed = hermes(answer, names);
  }
  if (!parsed || parsed->calls.empty()) return ParsedAnswer{std::string(answer), {}};
  return std::move(*parsed);
}

std::size_t content_before_calls(std::string_view text, const ToolUse& tools) {
  const std::size_t first = skip_space(text, 0);
  switch (tools.syntax) {
    case ToolSyntax::kLlama3Json: {
      // Calls are the whole answer: it is content once it starts with anything else.
      if (first == text.size()) return 0;
      const std::string_view rest = text.substr(first);
      const std::size_t n = std::min(rest.size(), kPythonTag.size());
      const bool may_call = rest.front() == '{' || rest.substr(0, n) == kPythonTag.substr(0, n);
      return may_call ? 0 : text.size();
    }
    case ToolSyntax::kGranite:
    case ToolSyntax::kPhi4Mini:
      if (first == text.size()) return 0;
      return std::min(before_marker(text, kListOpen), before_marker(text, kBareList));
    default:
      return before_marker(text, kHermesOpen);
  }
}

}  // namespace lpx::openai
