#include "chat_template/value_format.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "chat_template/limits.hpp"
#include "chat_template/safe_sort.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"

namespace lpx::core::jinja {
namespace {

void append_hex(std::string& out, char32_t code, int digits, char prefix) {
  std::array<char, 16> buffer{};
  std::snprintf(buffer.data(), buffer.size(), "%0*x", digits, static_cast<unsigned>(code));
  out.push_back('\\');
  out.push_back(prefix);
  out += buffer.data();
}

void append_repr(std::string& out, const Value& value, int depth);

// Objects print their contents through to_repr() again (a namespace holding a list holding a
// namespace...), so the nesting depth is tracked per thread across those calls.
thread_local int repr_nesting = 0;
thread_local std::vector<const void*> objects_being_printed;

class ReprNesting {
 public:
  ReprNesting() { require_value_depth(++repr_nesting); }
  ReprNesting(const ReprNesting&) = delete;
  ReprNesting& operator=(const ReprNesting&) = delete;
  ~ReprNesting() { --repr_nesting; }
};

void append_sequence_repr(std::string& out, const Value& value, int depth) {
  const SequenceKind kind = value.sequence_kind();
  if (kind == SequenceKind::kGenerator) {
    out += "<generator object>";  // Python adds a memory address here
    return;
  }
  const bool view = kind != SequenceKind::kList && kind != SequenceKind::kTuple;
  if (view) out += cat(value.type_name(), "(");
  const bool tuple = kind == SequenceKind::kTuple;
  out.push_back(tuple ? '(' : '[');
  const ValueList& items = value.as_list();
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    append_repr(out, items[i], depth + 1);
  }
  if (tuple && items.size() == 1) out.push_back(',');
  out.push_back(tuple ? ')' : ']');
  if (view) out.push_back(')');
}

void append_repr(std::string& out, const Value& value, int depth) {
  require_value_depth(depth);
  const ReprNesting nesting;
  require_string_size(out.size());
  switch (value.kind()) {
    case Value::Kind::kUndefined: out += "Undefined"; return;
    case Value::Kind::kString: out += python_string_repr(value.as_string()); return;
    case Value::Kind::kList: append_sequence_repr(out, value, depth); return;
    case Value::Kind::kDict: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.as_dict().entries()) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, key, depth + 1);
        out += ": ";
        append_repr(out, item, depth + 1);
      }
      out.push_back('}');
      return;
    }
    default: out += to_str(value);
  }
}

// --- JSON -------------------------------------------------------------------------------------

void append_json_string(std::string& out, std::string_view text, bool ensure_ascii) {
  out.push_back('"');
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    switch (c) {
      case '"': out += "\\\""; continue;
      case '\\': out += "\\\\"; continue;
      case '\n': out += "\\n"; continue;
      case '\r': out += "\\r"; continue;
      case '\t': out += "\\t"; continue;
      case '\b': out += "\\b"; continue;
      case '\f': out += "\\f"; continue;
      default: break;
    }
    if (c < 0x20 || (ensure_ascii && c >= 0x7F)) {
      if (c >= 0x10000) {  // a UTF-16 surrogate pair, as Python writes it
        const char32_t offset = c - 0x10000;
        append_hex(out, 0xD800 + (offset >> 10), 4, 'u');
        append_hex(out, 0xDC00 + (offset & 0x3FF), 4, 'u');
      } else {
        append_hex(out, c, 4, 'u');
      }
    } else {
      unicode::append(out, c);
    }
  }
  out.push_back('"');
}

std::string json_float(double number) {
  if (std::isnan(number)) return "NaN";
  if (std::isinf(number)) return number > 0 ? "Infinity" : "-Infinity";
  return python_float_repr(number);
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonOptions& options) : options_(options) {
    item_separator_ = options.item_separator.value_or(options.indent ? "," : ", ");
  }

  void write(std::string& out, const Value& value, int depth) {
    require_value_depth(depth);
    require_string_size(out.size());
    switch (value.kind()) {
      case Value::Kind::kNone: out += "null"; return;
      case Value::Kind::kBool: out += value.as_bool() ? "true" : "false"; return;
      case Value::Kind::kInt: out += std::to_string(value.as_int()); return;
      case Value::Kind::kFloat: out += json_float(value.as_double()); return;
      case Value::Kind::kString:
        append_json_string(out, value.as_string(), options_.ensure_ascii);
        return;
      case Value::Kind::kList:
        if (!value.is_list()) break;
        write_list(out, value.as_list(), depth);
        return;
      case Value::Kind::kDict: write_dict(out, value.as_dict(), depth); return;
      default: break;
    }
    fail(cat("Object of type ", value.type_name(), " is not JSON serializable"));
  }

 private:
  void open(std::string& out, char bracket, int depth) const {
    out.push_back(bracket);
    newline(out, depth + 1);
  }
  void close(std::string& out, char bracket, int depth) const {
    newline(out, depth);
    out.push_back(bracket);
  }
  void newline(std::string& out, int level) const {
    if (!options_.indent) return;
    out.push_back('\n');
    for (int i = 0; i < level; ++i) out += *options_.indent;
  }
  void separate(std::string& out, int depth) const {
    out += item_separator_;
    newline(out, depth + 1);
  }

  void write_list(std::string& out, const ValueList& items, int depth) {
    if (items.empty()) {
      out += "[]";
      return;
    }
    open(out, '[', depth);
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (i > 0) separate(out, depth);
      write(out, items[i], depth + 1);
    }
    close(out, ']', depth);
  }

  static std::string key_text(const Value& key) {
    switch (key.kind()) {
      case Value::Kind::kString: return key.as_string();
      case Value::Kind::kBool: return key.as_bool() ? "true" : "false";
      case Value::Kind::kInt: return std::to_string(key.as_int());
      case Value::Kind::kFloat: return json_float(key.as_double());
      case Value::Kind::kNone: return "null";
      default: fail(cat("keys must be str, int, float, bool or None, not ", key.type_name()));
    }
  }

  void write_dict(std::string& out, const Dict& dict, int depth) {
    if (dict.empty()) {
      out += "{}";
      return;
    }
    std::vector<const Dict::Entry*> entries;
    entries.reserve(dict.size());
    for (const auto& entry : dict.entries()) entries.push_back(&entry);
    if (options_.sort_keys) {
      // Python sorts the original keys, so mixed key types are an error there too.
      safe_stable_sort(entries, [](const Dict::Entry* a, const Dict::Entry* b) {
        return compare(a->first, CompareOp::kLess, b->first);
      });
    }
    open(out, '{', depth);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (i > 0) separate(out, depth);
      append_json_string(out, key_text(entries[i]->first), options_.ensure_ascii);
      out += options_.key_separator;
      write(out, entries[i]->second, depth + 1);
    }
    close(out, '}', depth);
  }

  const JsonOptions& options_;
  std::string item_separator_;
};

}  // namespace

std::string repr_once(const void* identity, std::string_view recursive_text,
                      const std::function<std::string()>& print) {
  for (const void* active : objects_being_printed) {
    if (active == identity) return std::string(recursive_text);
  }
  objects_being_printed.push_back(identity);
  struct Pop {
    Pop() = default;
    Pop(const Pop&) = delete;
    Pop& operator=(const Pop&) = delete;
    ~Pop() { objects_being_printed.pop_back(); }
  } pop;
  return print();
}

std::string python_float_repr(double number) {
  if (std::isnan(number)) return "nan";
  if (std::isinf(number)) return number > 0 ? "inf" : "-inf";
  // The shortest digits that round-trip (what Python's repr uses), then Python's layout rules:
  // positional notation when the decimal exponent is in [-4, 16), scientific otherwise.
  std::array<char, 64> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), number,
                                    std::chars_format::scientific);
  const std::string_view text(buffer.data(), static_cast<std::size_t>(result.ptr - buffer.data()));
  const std::size_t e = text.find('e');
  std::string digits;
  bool negative = false;
  for (char c : text.substr(0, e)) {
    if (c == '-') negative = true;
    if (c >= '0' && c <= '9') digits.push_back(c);
  }
  int exponent = 0;
  std::from_chars(text.data() + e + 1 + (text[e + 1] == '+' ? 1 : 0), text.data() + text.size(),
                  exponent);
  const int point = exponent + 1;  // digits[0:point] is the integer part
  std::string out = negative ? "-" : "";
  const auto count = static_cast<int>(digits.size());
  if (point > -4 && point <= 16) {
    if (point <= 0) {
      out += cat("0.", std::string(static_cast<std::size_t>(-point), '0'), digits);
    } else if (point >= count) {
      out += digits + std::string(static_cast<std::size_t>(point - count), '0') + ".0";
    } else {
      out += digits.substr(0, static_cast<std::size_t>(point)) +
             cat(".", digits.substr(static_cast<std::size_t>(point)));
    }
    return out;
  }
  out += digits.substr(0, 1);
  if (count > 1) out += cat(".", digits.substr(1));
  std::array<char, 16> exponent_text{};
  std::snprintf(exponent_text.data(), exponent_text.size(), "e%c%02d", exponent < 0 ? '-' : '+',
                std::abs(exponent));
  out += exponent_text.data();
  return out;
}

std::string python_string_repr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (unicode::is_printable(c)) {
      unicode::append(out, c);
    } else if (c < 0x100) {
      append_hex(out, c, 2, 'x');
    } else if (c < 0x10000) {
      append_hex(out, c, 4, 'u');
    } else {
      append_hex(out, c, 8, 'U');
    }
  }
  out.push_back(quote);
  return out;
}

std::string to_str(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return "";
    case Value::Kind::kNone: return "None";
    case Value::Kind::kBool: return value.as_bool() ? "True" : "False";
    case Value::Kind::kInt: return std::to_string(value.as_int());
    case Value::Kind::kFloat: return python_float_repr(value.as_double());
    case Value::Kind::kString: return value.as_string();
    case Value::Kind::kObject: return value.as_object().repr();
    case Value::Kind::kList:
    case Value::Kind::kDict: break;
  }
  std::string out;
  append_repr(out, value, 0);
  return out;
}

std::string to_repr(const Value& value) {
  std::string out;
  append_repr(out, value, 0);
  return out;
}

std::string to_json(const Value& value, const JsonOptions& options) {
  std::string out;
  JsonWriter(options).write(out, value, 0);
  return out;
}

}  // namespace lpx::core::jinja
