#include "chat_template/predicates.hpp"

#include <array>
#include <cmath>
#include <unordered_map>

#include "chat_template/filters.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

const Value& argument(const CallArguments& arguments, std::string_view test) {
  if (arguments.positional.size() != 1 || !arguments.keyword.empty()) {
    fail(cat("test '", std::string(test), "' takes exactly one argument"));
  }
  return arguments.positional[0];
}

void no_arguments(const CallArguments& arguments, std::string_view test) {
  if (!arguments.positional.empty() || !arguments.keyword.empty()) {
    fail(cat("test '", std::string(test), "' takes no arguments"));
  }
}

// value % divisor == 0 with Python's numbers.
bool divisible(const Value& value, const Value& divisor) {
  const Value remainder = binary_operation(BinaryOp::kModulo, value, divisor);
  return equals(remainder, Value::integer(0));
}

// Jinja's odd/even: value % 2 == 1 (or 0), so -0.5 is neither.
bool remainder_is(const Value& value, std::int64_t expected) {
  return equals(binary_operation(BinaryOp::kModulo, value, Value::integer(2)),
                Value::integer(expected));
}

bool string_case(const Value& value, bool upper) {
  const std::string text = to_str(value);
  bool cased = false;
  for (std::size_t pos = 0; pos < text.size();) {
    const char32_t c = unicode::decode(text, pos);
    if (upper ? unicode::is_lower(c) : unicode::is_upper(c)) return false;
    cased = cased || unicode::is_cased(c);
  }
  return cased;
}

template <CompareOp op>
bool compare_test(const Value& value, const CallArguments& arguments) {
  return compare(value, op, argument(arguments, compare_op_symbol(op)));
}

#define LPX_SIMPLE_TEST(function_name, test_name, expression)              \
  bool function_name(const Value& value, const CallArguments& arguments) { \
    no_arguments(arguments, test_name);                                    \
    return expression;                                                     \
  }

LPX_SIMPLE_TEST(test_defined, "defined", !value.is_undefined())
LPX_SIMPLE_TEST(test_undefined, "undefined", value.is_undefined())
LPX_SIMPLE_TEST(test_none, "none", value.is_none())
LPX_SIMPLE_TEST(test_boolean, "boolean", value.is_bool())
LPX_SIMPLE_TEST(test_true, "true", value.is_bool() && value.as_bool())
LPX_SIMPLE_TEST(test_false, "false", value.is_bool() && !value.as_bool())
LPX_SIMPLE_TEST(test_integer, "integer", value.is_int())
LPX_SIMPLE_TEST(test_float, "float", value.is_float())
LPX_SIMPLE_TEST(test_number, "number", value.is_number())
LPX_SIMPLE_TEST(test_string, "string", value.is_string())
LPX_SIMPLE_TEST(test_mapping, "mapping", value.is_dict())
// Python strings, lists, dicts and Jinja's Undefined are iterable; so is a loop context.
LPX_SIMPLE_TEST(test_iterable, "iterable",
                value.is_string() || value.is_list() || value.is_dict() || value.is_undefined() ||
                    (value.is_object() && value.type_name() == "LoopContext"))
LPX_SIMPLE_TEST(test_sequence, "sequence",
                value.is_string() || value.is_list() || value.is_dict() || value.is_undefined())
LPX_SIMPLE_TEST(test_callable, "callable",
                value.is_undefined() || (value.is_object() && value.as_object().callable()))
LPX_SIMPLE_TEST(test_lower, "lower", string_case(value, false))
LPX_SIMPLE_TEST(test_upper, "upper", string_case(value, true))
LPX_SIMPLE_TEST(test_odd, "odd", remainder_is(value, 1))
LPX_SIMPLE_TEST(test_even, "even", remainder_is(value, 0))

#undef LPX_SIMPLE_TEST

// No value is Markup without autoescaping, so nothing counts as escaped.
bool test_escaped(const Value&, const CallArguments& arguments) {
  no_arguments(arguments, "escaped");
  return false;
}

bool test_divisibleby(const Value& value, const CallArguments& arguments) {
  return divisible(value, argument(arguments, "divisibleby"));
}

bool test_in(const Value& value, const CallArguments& arguments) {
  return contains(argument(arguments, "in"), value);
}

// Python's `is`: identity. Shared values (lists, dicts, objects) compare by address; None and
// booleans are singletons; numbers and strings fall back to equality, which is what CPython's
// caching gives for the small values templates use.
bool test_sameas(const Value& value, const CallArguments& arguments) {
  const Value& other = argument(arguments, "sameas");
  if (value.kind() != other.kind()) return false;
  switch (value.kind()) {
    case Value::Kind::kList: return &value.as_list() == &other.as_list();
    case Value::Kind::kDict: return &value.as_dict() == &other.as_dict();
    default: return equals(value, other);
  }
}

bool test_filter(const Value& value, const CallArguments& arguments) {
  no_arguments(arguments, "filter");
  return value.is_string() && find_filter(value.as_string()) != nullptr;
}

bool test_test(const Value& value, const CallArguments& arguments) {
  no_arguments(arguments, "test");
  return value.is_string() && find_test(value.as_string()) != nullptr;
}

const std::unordered_map<std::string_view, TestFunction>& tests() {
  static const std::unordered_map<std::string_view, TestFunction> table{
      {"defined", test_defined},
      {"undefined", test_undefined},
      {"none", test_none},
      {"boolean", test_boolean},
      {"true", test_true},
      {"false", test_false},
      {"integer", test_integer},
      {"float", test_float},
      {"number", test_number},
      {"string", test_string},
      {"mapping", test_mapping},
      {"iterable", test_iterable},
      {"sequence", test_sequence},
      {"callable", test_callable},
      {"escaped", test_escaped},
      {"lower", test_lower},
      {"upper", test_upper},
      {"odd", test_odd},
      {"even", test_even},
      {"divisibleby", test_divisibleby},
      {"in", test_in},
      {"sameas", test_sameas},
      {"filter", test_filter},
      {"test", test_test},
      {"eq", compare_test<CompareOp::kEqual>},
      {"equalto", compare_test<CompareOp::kEqual>},
      {"==", compare_test<CompareOp::kEqual>},
      {"ne", compare_test<CompareOp::kNotEqual>},
      {"!=", compare_test<CompareOp::kNotEqual>},
      {"lt", compare_test<CompareOp::kLess>},
      {"lessthan", compare_test<CompareOp::kLess>},
      {"<", compare_test<CompareOp::kLess>},
      {"le", compare_test<CompareOp::kLessEqual>},
      {"<=", compare_test<CompareOp::kLessEqual>},
      {"gt", compare_test<CompareOp::kGreater>},
      {"greaterthan", compare_test<CompareOp::kGreater>},
      {">", compare_test<CompareOp::kGreater>},
      {"ge", compare_test<CompareOp::kGreaterEqual>},
      {">=", compare_test<CompareOp::kGreaterEqual>},
  };
  return table;
}

}  // namespace

TestFunction find_test(std::string_view name) {
  const auto found = tests().find(name);
  return found == tests().end() ? nullptr : found->second;
}

bool is_unsupported_jinja_test(std::string_view) { return false; }  // every Jinja2 test is here

}  // namespace lpx::core::jinja
