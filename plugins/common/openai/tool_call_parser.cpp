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

// Past `close` at `pos`: its end; the end of the text where the text ends inside it (cut off by
// max_tokens); npos where something else follows.
std::size_t close_at(std::string_view text, std::size_t pos, std::string_view close) {
  if (starts_with(text, pos, close)) return pos + close.size();
  const std::string_view rest = text.substr(pos);
  return close.substr(0, rest.size()) == rest ? text.size() : std::string_view::npos;
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
    p = close_at(text, skip_space(text, p), kHermesClose);
    if (p == std::string_view::npos) return std::nullopt;
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

// Where a list of calls may start at or after `from`: a <|tool_call|> marker, or, as the marker
// is a special token that an answer's text may not carry, a bare '[' before a '{' (or before
// the end of the text, where the rest may still come).
std::size_t next_list(std::string_view text, std::size_t from) {
  std::size_t bare = text.find('[', from);
  while (bare != std::string_view::npos) {
    const std::size_t next = skip_space(text, bare + 1);
    if (next == text.size() || text[next] == '{') break;
    bare = text.find('[', bare + 1);
  }
  return std::min(text.find(kListOpen, from), bare);
}

// The whole calls of a list cut off by max_tokens ("[{...}, {..."): added to `calls`; returns
// where the cut element starts.
std::size_t cut_list(std::string_view text, std::size_t pos, const std::vector<std::string>& names,
                     std::vector<ParsedToolCall>& calls) {
  pos = skip_space(text, pos);
  if (!starts_with(text, pos, "[")) return pos;
  std::size_t p = pos + 1;
  while (true) {
    const std::size_t element = skip_space(text, p);
    std::size_t after = element;
    const auto value = json_at(text, after);
    if (!value || !value->is_object()) return element;
    auto call = call_from(*value, names);
    if (!call) return element;
    calls.push_back(std::move(*call));
    p = skip_space(text, after);
    if (!starts_with(text, p, ",")) return p;
    ++p;
  }
}

// <|tool_call|>[{...}, ...] lists (Granite; Phi-4-mini closes each with <|/tool_call|>), with
// text around them. A list cut off by max_tokens keeps its whole calls; its rest is content. A
// bare list that is not calls (an answer's own JSON) is content.
std::optional<ParsedAnswer> listed(std::string_view text, const std::vector<std::string>& names) {
  ParsedAnswer out;
  std::size_t pos = 0;
  for (std::size_t open; (open = next_list(text, pos)) != std::string_view::npos;) {
    out.content += text.substr(pos, open - pos);
    const bool marked = starts_with(text, open, kListOpen);
    std::size_t p = marked ? open + kListOpen.size() : open;
    const std::size_t before = out.calls.size();
    const auto value = json_at(text, p);
    if (!value) {
      if (text.find(kListClose, open) != std::string_view::npos) return std::nullopt;
      const std::size_t cut = cut_list(text, p, names, out.calls);
      if (out.calls.size() > before) {  // the list ran to the end of the answer
        out.content += text.substr(cut);
        return out;
      }
      if (!marked && skip_space(text, cut) != text.size()) {
        out.content += text.substr(open, 1);  // a '[' of the answer's own text
        pos = open + 1;
        continue;
      }
      out.content += text.substr(open);
      return out;
    }
    if (!add_calls(*value, names, out.calls)) {
      if (marked) return std::nullopt;
      out.calls.resize(before);
      out.content += text.substr(open, p - open);
      pos = p;
      continue;
    }
    p = skip_space(text, p);
    const std::size_t closed = close_at(text, p, kListClose);  // Phi-4-mini's; Granite has none
    pos = closed != std::string_view::npos ? closed : p;
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

std::size_t content_start(std::string_view answer) { return skip_space(answer, 0); }

std::size_t content_before_calls(std::string_view text, const ToolUse& tools) {
  const std::size_t first = skip_space(text, 0);
  std::size_t end = text.size();
  switch (tools.syntax) {
    case ToolSyntax::kLlama3Json: {
      // Calls are the whole answer: it is content once it starts with anything else.
      if (first == text.size()) return 0;
      const std::string_view rest = text.substr(first);
      const std::size_t n = std::min(rest.size(), kPythonTag.size());
      if (rest.front() == '{' || rest.substr(0, n) == kPythonTag.substr(0, n)) return 0;
      break;
    }
    case ToolSyntax::kGranite:
    case ToolSyntax::kPhi4Mini:
      end = std::min(before_marker(text, kListOpen), next_list(text, 0));
      break;
    default:
      end = before_marker(text, kHermesOpen);
  }
  // Whitespace before a call is not content (a whole answer's content is trimmed): it waits
  // for the text that follows it.
  while (end > 0 && is_space(text[end - 1])) --end;
  return end;
}

}  // namespace lpx::openai
