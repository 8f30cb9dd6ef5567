#include "chat_template/string_format.hpp"

#include <array>
#include <cmath>
#include <cstdio>

#include "chat_template/limits.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

// The parts of a format specification both languages share.
struct Spec {
  std::string fill = " ";
  char align = '\0';  // '<', '>', '^', '=' or none
  char sign = '-';    // '-', '+' or ' '
  bool alternate = false;
  bool zero = false;
  int width = -1;
  int precision = -1;
  char type = '\0';
};

int read_number(std::string_view text, std::size_t& pos) {
  int value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    value = value * 10 + (text[pos++] - '0');
    if (value > 100000) fail("format width or precision too large");
  }
  return value;
}

// printf of one double with a presentation type in "fFeEgG" and optional '#'. Each call
// spells its format as a literal so -Wformat can check it.
std::string c_format(char type, bool alternate, double number, int precision) {
  std::array<char, 512> buffer{};
  char* out = buffer.data();
  const std::size_t size = buffer.size();
  int written = -1;
  switch (type) {
    case 'f':
      written = alternate ? std::snprintf(out, size, "%#.*f", precision, number)
                          : std::snprintf(out, size, "%.*f", precision, number);
      break;
    case 'F':
      written = alternate ? std::snprintf(out, size, "%#.*F", precision, number)
                          : std::snprintf(out, size, "%.*F", precision, number);
      break;
    case 'e':
      written = alternate ? std::snprintf(out, size, "%#.*e", precision, number)
                          : std::snprintf(out, size, "%.*e", precision, number);
      break;
    case 'E':
      written = alternate ? std::snprintf(out, size, "%#.*E", precision, number)
                          : std::snprintf(out, size, "%.*E", precision, number);
      break;
    case 'g':
      written = alternate ? std::snprintf(out, size, "%#.*g", precision, number)
                          : std::snprintf(out, size, "%.*g", precision, number);
      break;
    default:
      written = alternate ? std::snprintf(out, size, "%#.*G", precision, number)
                          : std::snprintf(out, size, "%.*G", precision, number);
      break;
  }
  if (written < 0 || static_cast<std::size_t>(written) >= buffer.size())
    fail("formatted number too long");
  return buffer.data();
}

std::string integer_text(std::int64_t number, char type, bool alternate) {
  const bool negative = number < 0;
  // Work on the magnitude as unsigned so INT64_MIN is fine.
  std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(number) : static_cast<std::uint64_t>(number);
  const int base = type == 'x' || type == 'X' ? 16 : (type == 'o' ? 8 : (type == 'b' ? 2 : 10));
  const char* digits = type == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), digits[magnitude % static_cast<std::uint64_t>(base)]);
    magnitude /= static_cast<std::uint64_t>(base);
  } while (magnitude > 0);
  if (alternate && base != 10) text = std::string("0") + (type == 'X' ? 'X' : type) + text;
  return (negative ? "-" : "") + text;
}

std::string format_with_spec(const Value& value, const Spec& spec) {
  std::string body;
  const char type = spec.type;
  if (type == '\0' || type == 's' || type == 'r' || type == 'a') {
    if (type == '\0' && value.is_number() && spec.precision >= 0) {
      fail("unsupported construct: a precision without a presentation type in a format spec");
    }
    body = type == 'r' || type == 'a' ? to_repr(value) : to_str(value);
    if ((type == 's' || type == '\0') && spec.precision >= 0 && value.is_string()) {
      body = unicode::from_code_points(
          unicode::to_code_points(body).substr(0, static_cast<std::size_t>(spec.precision)));
    }
  } else if (type == 'c') {
    if (value.is_string() && unicode::length(value.as_string()) == 1) {
      body = value.as_string();
    } else if (value.is_integral() && value.as_int() >= 0 && value.as_int() <= 0x10FFFF) {
      unicode::append(body, static_cast<char32_t>(value.as_int()));
    } else {
      fail("%c requires an int or a single character");
    }
  } else {
    if (!value.is_number()) {
      fail(std::string("%") + type +
           cat(" format: a real number is required, not ", value.type_name()));
    }
    if (type == 'd' || type == 'i' || type == 'u' || type == 'x' || type == 'X' || type == 'o' ||
        type == 'b') {
      const std::int64_t number = value.is_float()
                                      ? static_cast<std::int64_t>(std::trunc(value.as_double()))
                                      : value.as_int();
      if (value.is_float() && !std::isfinite(value.as_double()))
        fail("cannot convert float to integer");
      body = integer_text(number, type, spec.alternate);
    } else if (type == 'f' || type == 'F' || type == 'e' || type == 'E' || type == 'g' ||
               type == 'G' || type == '%') {
      const int precision = spec.precision < 0 ? 6 : spec.precision;
      double number = value.as_double();
      const char pattern_type = type == '%' ? 'f' : type;
      if (type == '%') number *= 100.0;
      body = c_format(pattern_type, spec.alternate, number, precision) + (type == '%' ? "%" : "");
    } else {
      fail(std::string("unsupported format character '") + type + "'");
    }
    if (body[0] != '-' && spec.sign != '-') body.insert(body.begin(), spec.sign);
  }
  const auto length = static_cast<int>(unicode::length(body));
  if (spec.width <= length) return body;
  const int missing = spec.width - length;
  char align = spec.align;
  if (align == '\0') align = value.is_number() && type != 's' && type != 'r' ? '>' : '<';
  if (spec.zero && value.is_number() &&
      (spec.align == '\0' || spec.align == '>' || spec.align == '=')) {
    // Zero padding goes between the sign and the digits.
    const std::size_t digits_at =
        !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
    return body.substr(0, digits_at) + std::string(static_cast<std::size_t>(missing), '0') +
           body.substr(digits_at);
  }
  auto repeat_fill = [&](int count) {
    std::string out;
    for (int i = 0; i < count; ++i) out += spec.fill;
    return out;
  };
  if (align == '<') return body + repeat_fill(missing);
  if (align == '^') return repeat_fill(missing / 2) + body + repeat_fill(missing - missing / 2);
  if (align == '=') {
    const std::size_t digits_at =
        !body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
    return body.substr(0, digits_at) + repeat_fill(missing) + body.substr(digits_at);
  }
  return repeat_fill(missing) + body;
}

// Format-spec mini-language: [[fill]align][sign][#][0][width][.precision][type]
Spec parse_format_spec(std::string_view text) {
  Spec spec;
  std::size_t pos = 0;
  auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
  std::size_t after_first = 0;
  if (!text.empty()) unicode::decode(text, after_first);
  if (after_first < text.size() && is_align(text[after_first])) {
    spec.fill = std::string(text.substr(0, after_first));
    spec.align = text[after_first];
    pos = after_first + 1;
  } else if (!text.empty() && is_align(text[0])) {
    spec.align = text[0];
    pos = 1;
  }
  if (pos < text.size() && (text[pos] == '+' || text[pos] == '-' || text[pos] == ' '))
    spec.sign = text[pos++];
  if (pos < text.size() && text[pos] == '#') {
    spec.alternate = true;
    ++pos;
  }
  if (pos < text.size() && text[pos] == '0') {
    spec.zero = true;
    ++pos;
  }
  if (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
    spec.width = read_number(text, pos);
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    spec.precision = read_number(text, pos);
  }
  if (pos < text.size()) spec.type = text[pos++];
  if (pos != text.size()) fail(cat("invalid format specifier '", std::string(text), "'"));
  return spec;
}

Value resolve_field(std::string_view field, const CallArguments& arguments,
                    std::size_t& next_auto) {
  std::size_t end = 0;
  while (end < field.size() && field[end] != '.' && field[end] != '[') ++end;
  const std::string_view head = field.substr(0, end);
  Value value;
  if (head.empty() || (head[0] >= '0' && head[0] <= '9')) {
    std::size_t index = next_auto;
    if (head.empty()) {
      ++next_auto;
    } else {
      std::size_t pos = 0;
      index = static_cast<std::size_t>(read_number(head, pos));
    }
    if (index >= arguments.positional.size())
      fail(cat("Replacement index ", std::to_string(index),
               " out of range for positional args tuple"));
    value = arguments.positional[index];
  } else {
    bool found = false;
    for (const auto& [name, argument] : arguments.keyword) {
      if (name == head) {
        value = argument;
        found = true;
      }
    }
    if (!found) fail(cat("KeyError: '", std::string(head), "'"));
  }
  // .attribute and [key] accessors, through the sandboxed lookups.
  while (end < field.size()) {
    if (field[end] == '.') {
      std::size_t stop = end + 1;
      while (stop < field.size() && field[stop] != '.' && field[stop] != '[') ++stop;
      value = get_attribute(value, field.substr(end + 1, stop - end - 1));
      end = stop;
    } else {
      const std::size_t close = field.find(']', end);
      if (close == std::string_view::npos) fail("Missing ']' in format string");
      const std::string_view key = field.substr(end + 1, close - end - 1);
      const bool numeric =
          !key.empty() && key.find_first_not_of("0123456789") == std::string_view::npos;
      std::size_t pos = 0;
      value = get_item(
          value, numeric ? Value::integer(read_number(key, pos)) : Value::string(std::string(key)));
      end = close + 1;
    }
  }
  return value;
}

}  // namespace

std::string python_str_format(std::string_view format, const CallArguments& arguments) {
  std::string out;
  std::size_t next_auto = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}') {
        out.push_back('}');
        ++i;
        continue;
      }
      fail("Single '}' encountered in format string");
    }
    if (c != '{') {
      out.push_back(c);
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out.push_back('{');
      ++i;
      continue;
    }
    const std::size_t close = format.find('}', i);
    if (close == std::string_view::npos) fail("Single '{' encountered in format string");
    std::string_view field = format.substr(i + 1, close - i - 1);
    std::string_view spec_text;
    char conversion = '\0';
    if (const std::size_t colon = field.find(':'); colon != std::string_view::npos) {
      spec_text = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const std::size_t bang = field.find('!'); bang != std::string_view::npos) {
      if (bang + 2 != field.size()) fail("expected ':' after conversion specifier");
      conversion = field[bang + 1];
      field = field.substr(0, bang);
    }
    Value value = resolve_field(field, arguments, next_auto);
    if (conversion == 'r' || conversion == 'a')
      value = Value::string(to_repr(value));
    else if (conversion == 's')
      value = Value::string(to_str(value));
    else if (conversion != '\0')
      fail(std::string("Unknown conversion specifier ") + conversion);
    out +=
        spec_text.empty() ? to_str(value) : format_with_spec(value, parse_format_spec(spec_text));
    require_string_size(out.size());
    i = close;
  }
  return out;
}

std::string python_percent_format(std::string_view format, const Value& arguments) {
  const bool mapping = arguments.is_dict();
  // Python treats any non-tuple argument with __getitem__ (list, dict) as a mapping: unused, it
  // is not an error.
  const bool mapping_like = mapping || (arguments.is_sequence() && !arguments.is_tuple());
  const ValueList positional = arguments.is_tuple() ? arguments.as_list() : ValueList{arguments};
  std::size_t next = 0;
  std::string out;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out.push_back(format[i]);
      continue;
    }
    if (++i >= format.size()) fail("incomplete format");
    Value value;
    bool have_value = false;
    if (format[i] == '(') {
      const std::size_t close = format.find(')', i);
      if (close == std::string_view::npos || !mapping) fail("format requires a mapping");
      value = get_item(arguments, Value::string(std::string(format.substr(i + 1, close - i - 1))));
      have_value = true;
      i = close + 1;
    }
    Spec spec;
    for (; i < format.size(); ++i) {
      const char flag = format[i];
      if (flag == '-')
        spec.align = '<';
      else if (flag == '+')
        spec.sign = '+';
      else if (flag == ' ')
        spec.sign = spec.sign == '+' ? '+' : ' ';
      else if (flag == '#')
        spec.alternate = true;
      else if (flag == '0')
        spec.zero = true;
      else
        break;
    }
    if (spec.align == '<') spec.zero = false;
    if (i < format.size() && format[i] == '*')
      fail("unsupported construct: '*' width in % formatting");
    if (i < format.size() && format[i] >= '1' && format[i] <= '9')
      spec.width = read_number(format, i);
    if (i < format.size() && format[i] == '.') {
      ++i;
      spec.precision = read_number(format, i);
    }
    if (i >= format.size()) fail("incomplete format");
    spec.type = format[i];
    if (spec.type == '%') {
      out.push_back('%');
      continue;
    }
    if (!have_value) {
      if (next >= positional.size()) fail("not enough arguments for format string");
      value = positional[next++];
    }
    if (spec.align == '\0') spec.align = '>';  // printf pads on the left unless '-' is given
    if (spec.type == 'i' || spec.type == 'u') spec.type = 'd';
    out += format_with_spec(value, spec);
    require_string_size(out.size());
  }
  if (!mapping_like && next < positional.size()) {
    fail("not all arguments converted during string formatting");
  }
  return out;
}

}  // namespace lpx::core::jinja
