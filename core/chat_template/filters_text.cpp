// Text filters: case, whitespace, replace, escape, indent, format, truncate, tojson, ...
#include <cctype>
#include <string>
#include <vector>

#include "chat_template/filter_library.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/methods.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/string_format.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

std::string callee(std::string_view filter) { return cat("filter '", std::string(filter), "'"); }

std::int64_t int_parameter(const Value& value, std::string_view what) {
  if (!value.is_integral()) fail(cat(what, " must be an integer, not ", value.type_name()));
  return value.as_int();
}

// Python's str.splitlines() line boundaries.
bool is_line_break(char32_t c) {
  return c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) ||
         c == 0x85 || c == 0x2028 || c == 0x2029;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    if (!is_line_break(c)) {
      unicode::append(line, c);
      continue;
    }
    if (c == '\r' && pos < text.size() && text[pos] == '\n') ++pos;
    lines.push_back(std::move(line));
    line.clear();
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

}  // namespace

namespace text_filters {

Value capitalize(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("capitalize"), arguments, {});
  return Value::string(python_capitalize(to_str(input)));
}

Value center(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("center"), arguments, {"width"});
  CallArguments method_arguments;
  method_arguments.positional.push_back(p.get_or(0, Value::integer(80)));
  return call_method(Value::string(to_str(input)), "center", method_arguments);
}

Value default_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("default"), arguments, {"default_value", "boolean"});
  const bool boolean = p.get_or(1, Value::boolean(false)).truthy();
  if (input.is_undefined() || (boolean && !input.truthy())) return p.get_or(0, Value::string(""));
  return input;
}

Value escape(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("escape"), arguments, {});
  std::string out;
  for (char c : to_str(input)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return Value::string(std::move(out));
}

Value format(const Value& input, const CallArguments& arguments) {
  if (!arguments.positional.empty() && !arguments.keyword.empty()) {
    fail("can't handle positional and keyword arguments at the same time");
  }
  if (!arguments.keyword.empty()) {
    Dict mapping;
    for (const auto& [name, value] : arguments.keyword) mapping.set(Value::string(name), value);
    return Value::string(python_percent_format(to_str(input), Value::dict(std::move(mapping))));
  }
  return Value::string(python_percent_format(to_str(input), Value::tuple(arguments.positional)));
}

// Jinja's indent works on the value itself (s += "\n"; s.splitlines()), so only strings work.
void require_text_for_indent(const Value& input) {
  if (input.is_string()) return;
  if (input.is_undefined()) fail(input.undefined_message());
  if (input.is_list() && !input.is_tuple()) fail("'list' object has no attribute 'splitlines'");
  fail(cat("unsupported operand type(s) for +=: '", input.type_name(), "' and 'str'"));
}

Value indent(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("indent"), arguments, {"width", "first", "blank"});
  require_text_for_indent(input);
  const Value width = p.get_or(0, Value::integer(4));
  std::string indentation;
  if (width.is_string()) {
    indentation = width.as_string();
  } else {
    const std::int64_t count = int_parameter(width, "indent width");
    require_string_size(count > 0 ? static_cast<std::size_t>(count) : 0);
    indentation.assign(count > 0 ? static_cast<std::size_t>(count) : 0, ' ');
  }
  const bool first = p.get_or(1, Value::boolean(false)).truthy();
  const bool blank = p.get_or(2, Value::boolean(false)).truthy();
  // Jinja appends a newline before splitting, so a trailing newline is not kept.
  std::vector<std::string> lines = split_lines(to_str(input) + "\n");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) {
      out += "\n";
      if (blank || !lines[i].empty()) out += indentation;
    }
    out += lines[i];
    require_string_size(out.size());
  }
  if (first) out = indentation + out;
  return Value::string(std::move(out));
}

Value lower(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("lower"), arguments, {});
  return Value::string(unicode::lower(to_str(input)));
}

Value upper(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("upper"), arguments, {});
  return Value::string(unicode::upper(to_str(input)));
}

Value replace(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("replace"), arguments, {"old", "new", "count"});
  if (!p.has(0) || !p.has(1)) fail("filter 'replace' needs the old and the new text");
  const Value count = p.get_or(2, Value::none());
  return Value::string(python_replace(to_str(input), to_str(*p.get(0)), to_str(*p.get(1)),
                                      count.is_none() ? -1 : int_parameter(count, "count")));
}

Value safe(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("safe"), arguments, {});
  return Value::string(to_str(input));  // no autoescaping, so marking safe only makes it a string
}

Value string_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("string"), arguments, {});
  return input.is_string() ? input : Value::string(to_str(input));
}

// Jinja's title: words start after whitespace, '-', '(', '{', '[' or '<'.
Value title(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("title"), arguments, {});
  const std::string text = to_str(input);
  std::string out;
  bool word_start = true;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    const bool separator =
        unicode::is_space(c) || c == '-' || c == '(' || c == '{' || c == '[' || c == '<';
    if (separator) {
      unicode::append(out, c);
      word_start = true;
    } else if (word_start) {
      if (c == 0xDF) {
        out += "SS";
      } else {
        unicode::append(out, unicode::to_upper(c));
      }
      word_start = false;
    } else {
      unicode::append(out, unicode::to_lower(c));
    }
  }
  return Value::string(std::move(out));
}

// Hugging Face's tojson: json.dumps(x, ensure_ascii=False, indent=None, separators=None,
// sort_keys=False).
Value tojson(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("tojson"), arguments, {"ensure_ascii", "indent", "separators", "sort_keys"});
  JsonOptions options;
  options.ensure_ascii = p.get_or(0, Value::boolean(false)).truthy();
  const Value indent = p.get_or(1, Value::none());
  if (indent.is_string()) {
    options.indent = indent.as_string();
  } else if (indent.is_integral()) {
    const std::int64_t width = indent.as_int();
    require_string_size(width > 0 ? static_cast<std::size_t>(width) : 0);
    options.indent = std::string(width > 0 ? static_cast<std::size_t>(width) : 0, ' ');
  } else if (!indent.is_none()) {
    fail("tojson indent must be an integer or a string");
  }
  const Value separators = p.get_or(2, Value::none());
  if (!separators.is_none()) {
    if (!separators.is_list() || separators.as_list().size() != 2 ||
        !separators.as_list()[0].is_string() || !separators.as_list()[1].is_string()) {
      fail("tojson separators must be a pair of strings");
    }
    options.item_separator = separators.as_list()[0].as_string();
    options.key_separator = separators.as_list()[1].as_string();
  }
  options.sort_keys = p.get_or(3, Value::boolean(false)).truthy();
  return Value::string(to_json(input, options));
}

Value trim(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("trim"), arguments, {"chars"});
  return Value::string(python_strip(to_str(input), p.get(0), true, true));
}

Value truncate(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("truncate"), arguments, {"length", "killwords", "end", "leeway"});
  // Jinja measures the value itself: a short list comes back unchanged, a number has no len().
  if (!input.is_string()) {
    const std::size_t size = jinja::length(input);
    if (static_cast<std::int64_t>(size) <=
        int_parameter(p.get_or(0, Value::integer(255)), "length") +
            int_parameter(p.get_or(3, Value::integer(5)), "leeway")) {
      return input;
    }
    fail(cat("'", input.type_name(), "' object has no attribute 'rsplit'"));
  }
  const std::u32string text = unicode::to_code_points(input.as_string());
  const std::int64_t length = int_parameter(p.get_or(0, Value::integer(255)), "length");
  const bool kill_words = p.get_or(1, Value::boolean(false)).truthy();
  const std::u32string end = unicode::to_code_points(to_str(p.get_or(2, Value::string("..."))));
  const std::int64_t leeway = int_parameter(p.get_or(3, Value::integer(5)), "leeway");
  const auto end_length = static_cast<std::int64_t>(end.size());
  if (length < end_length)
    fail(cat("expected length >= ", std::to_string(end_length), ", got ", std::to_string(length)));
  if (leeway < 0) fail(cat("expected leeway >= 0, got ", std::to_string(leeway)));
  if (static_cast<std::int64_t>(text.size()) <= length + leeway)
    return input.is_string() ? input : Value::string(to_str(input));
  std::u32string kept = text.substr(0, static_cast<std::size_t>(length - end_length));
  if (!kill_words) {
    const std::size_t space = kept.rfind(U' ');
    if (space != std::u32string::npos) kept.resize(space);
  }
  return Value::string(unicode::from_code_points(kept + end));
}

// Counts runs of word characters (Python's \w+): letters, digits, '_', and non-ASCII text
// outside the punctuation blocks.
Value wordcount(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("wordcount"), arguments, {});
  const std::string text = to_str(input);
  std::int64_t words = 0;
  bool in_word = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    const bool word = (c < 0x80 && (std::isalnum(static_cast<int>(c)) || c == '_')) ||
                      (c >= 0x80 && !unicode::is_space(c) && unicode::is_printable(c) &&
                       !(c >= 0x2000 && c <= 0x206F) && !(c >= 0x3000 && c <= 0x303F) &&
                       c != 0xA7 && c != 0xB6 && c != 0xAB && c != 0xBB);
    if (word && !in_word) ++words;
    in_word = word;
  }
  return Value::integer(words);
}

}  // namespace text_filters
}  // namespace lpx::core::jinja
