#include "chat_template/methods.hpp"

#include <array>
#include <memory>

#include "chat_template/limits.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/string_format.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

constexpr std::array<std::string_view, 27> kStringMethods{
    "strip",   "lstrip",  "rstrip",  "split",      "splitlines", "startswith", "endswith",
    "upper",   "lower",   "title",   "capitalize", "swapcase",   "replace",    "find",
    "rfind",   "index",   "count",   "join",       "format",     "isdigit",    "isalpha",
    "isalnum", "isspace", "isupper", "islower",    "center",     "zfill"};
constexpr std::array<std::string_view, 5> kDictMethods{"keys", "values", "items", "get", "copy"};
constexpr std::array<std::string_view, 5> kDictMutators{"clear", "pop", "popitem", "setdefault",
                                                        "update"};
constexpr std::array<std::string_view, 3> kListMethods{"index", "count", "copy"};
constexpr std::array<std::string_view, 8> kListMutators{"append", "extend",  "insert", "pop",
                                                        "remove", "reverse", "sort",   "clear"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& names, std::string_view name) {
  for (std::string_view candidate : names) {
    if (candidate == name) return true;
  }
  return false;
}

const std::string& string_argument(const Value* value, std::string_view what) {
  if (value == nullptr || !value->is_string()) {
    fail(std::string(what) +
         cat(" must be str, not ", (value ? value->type_name() : std::string("nothing"))));
  }
  return value->as_string();
}

std::int64_t int_argument(const Value* value, std::int64_t fallback) {
  if (value == nullptr || value->is_none()) return fallback;
  if (!value->is_integral())
    fail(cat("'", value->type_name(), "' object cannot be interpreted as an integer"));
  return value->as_int();
}

// Code point index of a byte offset (Python reports positions in characters).
std::int64_t character_index(std::string_view text, std::size_t byte_offset) {
  return static_cast<std::int64_t>(unicode::length(text.substr(0, byte_offset)));
}

bool matches_affix(const std::string& text, const Value& affix, bool prefix,
                   std::string_view method) {
  auto check = [&](const Value& candidate) {
    const std::string& part = string_argument(&candidate, std::string(method) + " argument");
    if (part.size() > text.size()) return false;
    return prefix ? text.compare(0, part.size(), part) == 0
                  : text.compare(text.size() - part.size(), part.size(), part) == 0;
  };
  if (affix.is_tuple()) {
    for (const Value& candidate : affix.as_list()) {
      if (check(candidate)) return true;
    }
    return false;
  }
  return check(affix);
}

template <class Predicate>
bool all_characters(const std::string& text, Predicate predicate) {
  if (text.empty()) return false;
  for (std::size_t pos = 0; pos < text.size();) {
    if (!predicate(unicode::decode(text, pos))) return false;
  }
  return true;
}

// str.isupper()/islower(): at least one cased character and none of the other case.
bool has_case(const std::string& text, bool upper) {
  bool cased = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    if (upper ? unicode::is_lower(c) : unicode::is_upper(c)) return false;
    cased = cased || unicode::is_cased(c);
  }
  return cased;
}

std::string pad(const std::string& text, std::int64_t width, std::string_view fill, bool center) {
  const auto length = static_cast<std::int64_t>(unicode::length(text));
  if (width <= length) return text;
  require_string_size(static_cast<std::size_t>(width) * fill.size());
  const std::int64_t total = width - length;
  // CPython: left = margin / 2 + (margin & width & 1), so odd margins lean right or left by width.
  std::int64_t left = center ? total / 2 + (total & width & 1) : total;
  std::string out;
  for (std::int64_t i = 0; i < left; ++i) out += fill;
  out += text;
  for (std::int64_t i = 0; i < total - left; ++i) out += fill;
  return out;
}

Value string_method(const std::string& text, std::string_view name,
                    const CallArguments& arguments) {
  const std::string callee = cat("str.", std::string(name), "()");
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    Parameters p(callee, arguments, {"chars"});
    return Value::string(python_strip(text, p.get(0), name != "rstrip", name != "lstrip"));
  }
  if (name == "split") {
    Parameters p(callee, arguments, {"sep", "maxsplit"});
    return Value::list(python_split(text, p.get(0), int_argument(p.get(1), -1)));
  }
  if (name == "splitlines") {
    Parameters p(callee, arguments, {"keepends"});
    const bool keep = p.get_or(0, Value::boolean(false)).truthy();
    ValueList lines;
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '\n' && text[i] != '\r') continue;
      std::size_t end = i + 1;
      if (text[i] == '\r' && end < text.size() && text[end] == '\n') ++end;
      lines.push_back(Value::string(text.substr(start, (keep ? end : i) - start)));
      start = end;
      i = end - 1;
    }
    if (start < text.size()) lines.push_back(Value::string(text.substr(start)));
    return Value::list(std::move(lines));
  }
  if (name == "startswith" || name == "endswith") {
    Parameters p(callee, arguments, {"affix"});
    if (!p.has(0)) fail(callee + " takes at least 1 argument (0 given)");
    return Value::boolean(matches_affix(text, *p.get(0), name == "startswith", name));
  }
  if (name == "upper") return Value::string(unicode::upper(text));
  if (name == "lower") return Value::string(unicode::lower(text));
  if (name == "title") return Value::string(python_title(text));
  if (name == "capitalize") return Value::string(python_capitalize(text));
  if (name == "swapcase") {
    std::string out;
    for (std::size_t pos = 0; pos < text.size();) {
      const char32_t c = unicode::decode(text, pos);
      unicode::append(out, unicode::is_upper(c) ? unicode::to_lower(c) : unicode::to_upper(c));
    }
    return Value::string(std::move(out));
  }
  if (name == "replace") {
    Parameters p(callee, arguments, {"old", "new", "count"});
    return Value::string(python_replace(text, string_argument(p.get(0), "replace() argument 1"),
                                        string_argument(p.get(1), "replace() argument 2"),
                                        int_argument(p.get(2), -1)));
  }
  if (name == "find" || name == "rfind" || name == "index") {
    Parameters p(callee, arguments, {"sub"});
    const std::string& needle = string_argument(p.get(0), callee + " argument");
    const std::size_t at = name == "rfind" ? text.rfind(needle) : text.find(needle);
    if (at == std::string::npos) {
      if (name == "index") fail("substring not found");
      return Value::integer(-1);
    }
    return Value::integer(character_index(text, at));
  }
  if (name == "count") {
    Parameters p(callee, arguments, {"sub"});
    const std::string& needle = string_argument(p.get(0), callee + " argument");
    if (needle.empty()) return Value::integer(static_cast<std::int64_t>(unicode::length(text)) + 1);
    std::int64_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos;
         at = text.find(needle, at + needle.size()))
      ++count;
    return Value::integer(count);
  }
  if (name == "join") {
    Parameters p(callee, arguments, {"iterable"});
    if (!p.has(0)) fail(callee + " takes exactly one argument (0 given)");
    std::string out;
    bool first = true;
    for (const Value& item : iterate(*p.get(0))) {
      if (!item.is_string())
        fail(cat("sequence item: expected str instance, ", item.type_name(), " found"));
      if (!first) out += text;
      first = false;
      out += item.as_string();
      require_string_size(out.size());
    }
    return Value::string(std::move(out));
  }
  if (name == "format") return Value::string(python_str_format(text, arguments));
  if (name == "isdigit") return Value::boolean(all_characters(text, unicode::is_digit));
  if (name == "isalpha") return Value::boolean(all_characters(text, unicode::is_alpha));
  if (name == "isalnum") {
    return Value::boolean(all_characters(
        text, [](char32_t c) { return unicode::is_alpha(c) || unicode::is_digit(c); }));
  }
  if (name == "isspace") return Value::boolean(all_characters(text, unicode::is_space));
  if (name == "isupper") return Value::boolean(has_case(text, true));
  if (name == "islower") return Value::boolean(has_case(text, false));
  if (name == "center") {
    Parameters p(callee, arguments, {"width", "fillchar"});
    const Value fill = p.get_or(1, Value::string(" "));
    if (!fill.is_string() || unicode::length(fill.as_string()) != 1) {
      fail("The fill character must be exactly one character long");
    }
    return Value::string(pad(text, int_argument(p.get(0), 0), fill.as_string(), true));
  }
  if (name == "zfill") {
    Parameters p(callee, arguments, {"width"});
    const std::int64_t width = int_argument(p.get(0), 0);
    const bool sign = !text.empty() && (text[0] == '-' || text[0] == '+');
    const std::string padded = pad(text.substr(sign ? 1 : 0), width - (sign ? 1 : 0), "0", false);
    return Value::string((sign ? text.substr(0, 1) : std::string()) + padded);
  }
  fail(cat("unsupported str method '", std::string(name), "'"));
}

Value dict_method(const Value& self, std::string_view name, const CallArguments& arguments) {
  const Dict& dict = self.as_dict();
  const std::string callee = cat("dict.", std::string(name), "()");
  if (name == "get") {
    Parameters p(callee, arguments, {"key", "default"});
    if (!p.has(0)) fail(callee + " expected at least 1 argument, got 0");
    const Value* found = dict.find(*p.get(0));
    return found ? *found : p.get_or(1, Value::none());
  }
  Parameters p(callee, arguments, {});
  if (name == "copy") return self;
  const SequenceKind view =
      name == "keys" ? SequenceKind::kDictKeys
                     : (name == "values" ? SequenceKind::kDictValues : SequenceKind::kDictItems);
  ValueList result;
  result.reserve(dict.size());
  for (const auto& [key, value] : dict.entries()) {
    if (name == "keys") {
      result.push_back(key);
    } else if (name == "values") {
      result.push_back(value);
    } else {
      result.push_back(Value::tuple({key, value}));
    }
  }
  return Value::sequence(std::move(result), view);
}

Value list_method(const Value& self, std::string_view name, const CallArguments& arguments) {
  const std::string callee = cat("list.", std::string(name), "()");
  if (name == "copy") {
    Parameters p(callee, arguments, {});
    return self;
  }
  Parameters p(callee, arguments, {"value"});
  if (!p.has(0)) fail(callee + " takes exactly one argument (0 given)");
  const ValueList& items = self.as_list();
  std::int64_t count = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!equals(items[i], *p.get(0))) continue;
    if (name == "index") return Value::integer(static_cast<std::int64_t>(i));
    ++count;
  }
  if (name == "index") fail(to_repr(*p.get(0)) + " is not in list");
  return Value::integer(count);
}

class BoundMethod final : public Object {
 public:
  BoundMethod(Value self, std::string name) : self_(std::move(self)), name_(std::move(name)) {}
  std::string type_name() const override { return "builtin_function_or_method"; }
  std::string repr() const override {
    return cat("<built-in method ", name_, " of ", self_.type_name(), " object>");
  }
  bool callable() const override { return true; }
  Value call(Renderer&, const CallArguments& arguments) const override {
    return call_method(self_, name_, arguments);
  }
  int depth() const override { return self_.depth() + 1; }

 private:
  Value self_;
  std::string name_;
};

}  // namespace

MethodLookup find_method(const Value& self, std::string_view name) {
  if (self.is_string() && listed(kStringMethods, name)) return MethodLookup::kMethod;
  if (self.is_dict()) {
    if (listed(kDictMethods, name)) return MethodLookup::kMethod;
    if (listed(kDictMutators, name)) return MethodLookup::kUnsafe;
  }
  if (self.is_list() && !self.is_tuple()) {
    if (listed(kListMethods, name)) return MethodLookup::kMethod;
    if (listed(kListMutators, name)) return MethodLookup::kUnsafe;
  }
  if (self.is_tuple() && (name == "index" || name == "count")) return MethodLookup::kMethod;
  return MethodLookup::kNone;
}

Value call_method(const Value& self, std::string_view name, const CallArguments& arguments) {
  if (self.is_string()) return string_method(self.as_string(), name, arguments);
  if (self.is_dict()) return dict_method(self, name, arguments);
  return list_method(self, name, arguments);
}

Value bound_method(const Value& self, std::string_view name) {
  require_value_depth(self.depth() + 1);
  return Value::object(std::make_shared<BoundMethod>(self, std::string(name)));
}

std::string python_strip(std::string_view text, const Value* chars, bool left, bool right) {
  std::u32string strip_set;
  const bool whitespace = chars == nullptr || chars->is_none();
  if (!whitespace) strip_set = unicode::to_code_points(string_argument(chars, "strip arg"));
  auto strips = [&](char32_t c) {
    return whitespace ? unicode::is_space(c) : strip_set.find(c) != std::u32string::npos;
  };
  std::size_t begin = 0;
  std::size_t end = text.size();
  if (left) {
    while (begin < end) {
      std::size_t next = begin;
      if (!strips(unicode::decode(text, next))) break;
      begin = next;
    }
  }
  if (right) {
    std::size_t keep = begin;
    for (std::size_t pos = begin; pos < end;) {
      if (!strips(unicode::decode(text, pos))) keep = pos;
    }
    end = keep;
  }
  return std::string(text.substr(begin, end - begin));
}

ValueList python_split(std::string_view text, const Value* separator, std::int64_t max_split) {
  ValueList parts;
  if (separator != nullptr && !separator->is_none()) {
    const std::string& sep = string_argument(separator, "split separator");
    if (sep.empty()) fail("empty separator");
    std::size_t start = 0;
    for (std::size_t at = text.find(sep);
         at != std::string::npos &&
         (max_split < 0 || static_cast<std::int64_t>(parts.size()) < max_split);
         at = text.find(sep, start)) {
      parts.push_back(Value::string(std::string(text.substr(start, at - start))));
      start = at + sep.size();
    }
    parts.push_back(Value::string(std::string(text.substr(start))));
    return parts;
  }
  // Runs of whitespace separate; leading and trailing whitespace produce no empty parts.
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t word_start = pos;
    while (word_start < text.size()) {
      std::size_t next = word_start;
      if (!unicode::is_space(unicode::decode(text, next))) break;
      word_start = next;
    }
    if (word_start >= text.size()) break;
    if (max_split >= 0 && static_cast<std::int64_t>(parts.size()) >= max_split) {
      parts.push_back(Value::string(std::string(text.substr(word_start))));
      return parts;
    }
    std::size_t word_end = word_start;
    while (word_end < text.size()) {
      std::size_t next = word_end;
      if (unicode::is_space(unicode::decode(text, next))) break;
      word_end = next;
    }
    parts.push_back(Value::string(std::string(text.substr(word_start, word_end - word_start))));
    pos = word_end;
  }
  return parts;
}

std::string python_replace(std::string_view text, std::string_view old_text,
                           std::string_view new_text, std::int64_t count) {
  std::string out;
  std::int64_t done = 0;
  if (old_text.empty()) {  // Python inserts the replacement around every character
    for (std::size_t pos = 0;;) {
      if (count < 0 || done < count) {
        out += new_text;
        ++done;
      }
      if (pos >= text.size()) break;
      unicode::append(out, unicode::decode(text, pos));
      require_string_size(out.size());
    }
    return out;
  }
  std::size_t start = 0;
  for (std::size_t at = text.find(old_text); at != std::string::npos && (count < 0 || done < count);
       at = text.find(old_text, start)) {
    out.append(text.substr(start, at - start));
    out += new_text;
    require_string_size(out.size());
    start = at + old_text.size();
    ++done;
  }
  out.append(text.substr(start));
  return out;
}

std::string python_capitalize(std::string_view text) {
  std::string out;
  bool first = true;
  for (std::size_t pos = 0; pos < text.size(); first = false) {
    const char32_t c = unicode::decode(text, pos);
    if (first && c == 0xDF) {
      out += "Ss";  // the title case of 'ß'
    } else {
      unicode::append(out, first ? unicode::to_upper(c) : unicode::to_lower(c));
    }
  }
  return out;
}

std::string python_title(std::string_view text) {
  std::string out;
  bool previous_cased = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    unicode::append(out, previous_cased ? unicode::to_lower(c) : unicode::to_upper(c));
    previous_cased = unicode::is_cased(c);
  }
  return out;
}

}  // namespace lpx::core::jinja
