// Number filters: abs, int, float, round, with Python's conversions and rounding.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "chat_template/filter_library.hpp"
#include "chat_template/methods.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {
namespace {

std::string callee(std::string_view filter) { return cat("filter '", std::string(filter), "'"); }

std::int64_t int_parameter(const Value& value, std::string_view what) {
  if (!value.is_integral()) fail(cat(what, " must be an integer, not ", value.type_name()));
  return value.as_int();
}

// Python's float(str): surrounding whitespace, a sign, '_' between digits, inf and nan.
std::optional<double> parse_python_float(const std::string& raw) {
  const std::string text = python_strip(raw, nullptr, true, true);
  std::string cleaned;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_') {
      const bool between_digits = i > 0 && i + 1 < text.size() &&
                                  std::isdigit(static_cast<unsigned char>(text[i - 1])) &&
                                  std::isdigit(static_cast<unsigned char>(text[i + 1]));
      if (!between_digits) return std::nullopt;
      continue;
    }
    cleaned.push_back(text[i]);
  }
  std::size_t start = 0;
  bool negative = false;
  if (!cleaned.empty() && (cleaned[0] == '+' || cleaned[0] == '-')) {
    negative = cleaned[0] == '-';
    start = 1;
  }
  if (start >= cleaned.size() || cleaned[start] == '+' || cleaned[start] == '-')
    return std::nullopt;
  double value = 0.0;
  const char* first = cleaned.data() + start;
  const char* last = cleaned.data() + cleaned.size();
  const auto result = std::from_chars(first, last, value);
  if (result.ptr != last) return std::nullopt;
  if (result.ec == std::errc::result_out_of_range) {
    // Python gives inf for huge values and 0.0 for tiny ones rather than an error.
    value = std::strtod(std::string(first, last).c_str(), nullptr);
  } else if (result.ec != std::errc()) {
    return std::nullopt;
  }
  return negative ? -value : value;
}

// Python's int(str, base); nullopt where Python raises ValueError.
std::optional<std::int64_t> parse_python_int(const std::string& raw, std::int64_t base) {
  std::string text = python_strip(raw, nullptr, true, true);
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.erase(0, 1);
  }
  if (text.size() > 1 && text[0] == '0') {
    const char prefix = static_cast<char>(text[1] | 0x20);
    const std::int64_t prefixed =
        prefix == 'x' ? 16 : (prefix == 'o' ? 8 : (prefix == 'b' ? 2 : 0));
    if (prefixed != 0 && (base == 0 || base == prefixed)) {
      base = prefixed;
      text.erase(0, 2);
      if (!text.empty() && text[0] == '_') text.erase(0, 1);
    }
  }
  if (base == 0) base = 10;
  if (base < 2 || base > 36 || text.empty() || text.front() == '_' || text.back() == '_')
    return std::nullopt;
  std::string digits;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '_' && text[i - 1] != '_') continue;
    digits.push_back(text[i]);
  }
  std::uint64_t magnitude = 0;
  const auto result = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude,
                                      static_cast<int>(base));
  if (result.ptr != digits.data() + digits.size() || digits.empty()) return std::nullopt;
  if (result.ec != std::errc() ||
      magnitude > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    fail("integer too large for this engine (64 bits)");
  }
  const auto value = static_cast<std::int64_t>(magnitude);
  return negative ? -value : value;
}

std::optional<std::int64_t> float_to_int(double number) {
  if (std::isnan(number)) return std::nullopt;
  if (std::isinf(number)) fail("cannot convert float infinity to integer");
  if (std::fabs(number) >= 9223372036854775808.0)
    fail("integer too large for this engine (64 bits)");
  return static_cast<std::int64_t>(std::trunc(number));
}

// Python's round(x, ndigits) for floats: exact decimal rounding, ties to even.
double round_float(double number, std::int64_t digits) {
  if (!std::isfinite(number) || digits > 308) return number;
  if (digits >= 0) {
    std::array<char, 512> buffer{};
    std::snprintf(buffer.data(), buffer.size(), "%.*f", static_cast<int>(digits), number);
    return std::strtod(buffer.data(), nullptr);
  }
  if (digits < -308) return std::copysign(0.0, number);
  const double scale = std::pow(10.0, static_cast<double>(-digits));
  return std::nearbyint(number / scale) * scale;
}

}  // namespace

namespace number_filters {

Value abs_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("abs"), arguments, {});
  if (input.is_integral()) {
    if (input.as_int() == std::numeric_limits<std::int64_t>::min())
      fail("integer overflow in abs()");
    return Value::integer(input.as_int() < 0 ? -input.as_int() : input.as_int());
  }
  if (input.is_float()) return Value::number(std::fabs(input.as_double()));
  if (input.is_undefined()) fail(input.undefined_message());
  fail(cat("bad operand type for abs(): '", input.type_name(), "'"));
}

Value float_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("float"), arguments, {"default"});
  if (input.is_undefined()) fail(input.undefined_message());  // Undefined.__float__ raises
  if (input.is_number()) return Value::number(input.as_double());
  if (input.is_string()) {
    if (const auto parsed = parse_python_float(input.as_string())) return Value::number(*parsed);
  }
  return p.get_or(0, Value::number(0.0));
}

Value int_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("int"), arguments, {"default", "base"});
  const Value fallback = p.get_or(0, Value::integer(0));
  if (input.is_undefined()) fail(input.undefined_message());  // Undefined.__int__ raises
  if (input.is_integral()) return Value::integer(input.as_int());
  if (input.is_float()) {
    const auto converted = float_to_int(input.as_double());
    return converted ? Value::integer(*converted) : fallback;
  }
  if (input.is_string()) {
    const std::int64_t base = int_parameter(p.get_or(1, Value::integer(10)), "base");
    if (const auto parsed = parse_python_int(input.as_string(), base))
      return Value::integer(*parsed);
    // Jinja's fallback: int(float(value)), so "42.23" gives 42.
    if (const auto parsed = parse_python_float(input.as_string())) {
      if (const auto converted = float_to_int(*parsed)) return Value::integer(*converted);
    }
  }
  return fallback;
}

Value round_value(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("round"), arguments, {"precision", "method"});
  const std::int64_t precision = int_parameter(p.get_or(0, Value::integer(0)), "precision");
  const Value method = p.get_or(1, Value::string("common"));
  if (!method.is_string() || (method.as_string() != "common" && method.as_string() != "floor" &&
                              method.as_string() != "ceil")) {
    fail("method must be common, ceil or floor");
  }
  if (!input.is_number()) {
    if (input.is_undefined()) fail(input.undefined_message());
    fail(cat("type ", input.type_name(), " doesn't define __round__ method"));
  }
  if (method.as_string() == "common") {
    if (input.is_float()) return Value::number(round_float(input.as_double(), precision));
    const std::int64_t value = input.as_int();
    if (precision >= 0 || precision < -18) return Value::integer(precision >= 0 ? value : 0);
    std::int64_t scale = 1;
    for (std::int64_t i = 0; i < -precision; ++i) scale *= 10;
    std::int64_t quotient = value / scale;
    const std::int64_t remainder = value % scale;
    // Ties go to the even multiple, as Python rounds.
    const std::int64_t twice = 2 * (remainder < 0 ? -remainder : remainder);
    if (twice > scale || (twice == scale && quotient % 2 != 0)) quotient += value < 0 ? -1 : 1;
    return Value::integer(quotient * scale);
  }
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double scaled = input.as_double() * scale;
  return Value::number((method.as_string() == "floor" ? std::floor(scaled) : std::ceil(scaled)) /
                       scale);
}

}  // namespace number_filters
}  // namespace lpx::core::jinja
