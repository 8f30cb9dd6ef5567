#include "chat_template/operators.hpp"

#include <cmath>
#include <limits>

#include "chat_template/limits.hpp"
#include "chat_template/methods.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/string_format.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

std::string_view symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSubtract: return "-";
    case BinaryOp::kMultiply: return "*";
    case BinaryOp::kDivide: return "/";
    case BinaryOp::kFloorDivide: return "//";
    case BinaryOp::kModulo: return "%";
    case BinaryOp::kPower: return "** or pow()";
    default: return "?";
  }
}

[[noreturn]] void unsupported_operands(BinaryOp op, const Value& left, const Value& right) {
  fail(cat("unsupported operand type(s) for ", std::string(symbol(op)), ": '", left.type_name(),
           "' and '", right.type_name(), "'"));
}

[[noreturn]] void integer_overflow() {
  fail("integer overflow (the result does not fit in 64 bits; Python would use a big integer)");
}

// Runs a __builtin_*_overflow style operation and fails instead of wrapping around.
template <class Operation>
std::int64_t checked(std::int64_t a, std::int64_t b, Operation operation) {
  std::int64_t result = 0;
  if (operation(a, b, &result)) integer_overflow();
  return result;
}

bool add_overflows(std::int64_t a, std::int64_t b, std::int64_t* result) {
  return __builtin_add_overflow(a, b, result);
}
bool subtract_overflows(std::int64_t a, std::int64_t b, std::int64_t* result) {
  return __builtin_sub_overflow(a, b, result);
}
bool multiply_overflows(std::int64_t a, std::int64_t b, std::int64_t* result) {
  return __builtin_mul_overflow(a, b, result);
}

// Python's float floor division and modulo (the sign of the result follows the divisor).
std::pair<double, double> float_divmod(double x, double y) {
  double mod = std::fmod(x, y);
  double div = (x - mod) / y;
  if (mod != 0.0) {
    if ((y < 0) != (mod < 0)) {
      mod += y;
      div -= 1.0;
    }
  } else {
    mod = std::copysign(0.0, y);
  }
  double floor_div = 0.0;
  if (div != 0.0) {
    floor_div = std::floor(div);
    if (div - floor_div > 0.5) floor_div += 1.0;
  } else {
    floor_div = std::copysign(0.0, x / y);
  }
  return {floor_div, mod};
}

Value integer_power(std::int64_t base, std::int64_t exponent) {
  std::int64_t result = 1;
  while (exponent > 0) {
    if (exponent & 1) result = checked(result, base, multiply_overflows);
    exponent >>= 1;
    if (exponent > 0) base = checked(base, base, multiply_overflows);
  }
  return Value::integer(result);
}

Value arithmetic(BinaryOp op, const Value& left, const Value& right) {
  if (left.is_integral() && right.is_integral()) {
    const std::int64_t a = left.as_int();
    const std::int64_t b = right.as_int();
    switch (op) {
      case BinaryOp::kAdd: return Value::integer(checked(a, b, add_overflows));
      case BinaryOp::kSubtract: return Value::integer(checked(a, b, subtract_overflows));
      case BinaryOp::kMultiply: return Value::integer(checked(a, b, multiply_overflows));
      case BinaryOp::kDivide:
        if (b == 0) fail("division by zero");
        return Value::number(static_cast<double>(a) / static_cast<double>(b));
      case BinaryOp::kFloorDivide: {
        if (b == 0) fail("integer division or modulo by zero");
        if (a == std::numeric_limits<std::int64_t>::min() && b == -1) integer_overflow();
        std::int64_t quotient = a / b;
        if (a % b != 0 && ((a < 0) != (b < 0))) --quotient;
        return Value::integer(quotient);
      }
      case BinaryOp::kModulo: {
        if (b == 0) fail("integer modulo by zero");
        if (b == -1) return Value::integer(0);
        std::int64_t remainder = a % b;
        if (remainder != 0 && ((remainder < 0) != (b < 0))) remainder += b;
        return Value::integer(remainder);
      }
      case BinaryOp::kPower:
        if (b >= 0) return integer_power(a, b);
        if (a == 0) fail("0.0 cannot be raised to a negative power");
        return Value::number(std::pow(static_cast<double>(a), static_cast<double>(b)));
      default: break;
    }
  }
  const double a = left.as_double();
  const double b = right.as_double();
  switch (op) {
    case BinaryOp::kAdd: return Value::number(a + b);
    case BinaryOp::kSubtract: return Value::number(a - b);
    case BinaryOp::kMultiply: return Value::number(a * b);
    case BinaryOp::kDivide:
      if (b == 0.0) fail("float division by zero");
      return Value::number(a / b);
    case BinaryOp::kFloorDivide:
      if (b == 0.0) fail("float floor division by zero");
      return Value::number(float_divmod(a, b).first);
    case BinaryOp::kModulo:
      if (b == 0.0) fail("float modulo");
      return Value::number(float_divmod(a, b).second);
    case BinaryOp::kPower: {
      if (a == 0.0 && b < 0.0) fail("0.0 cannot be raised to a negative power");
      if (a < 0.0 && b != std::floor(b) && std::isfinite(b)) {
        fail(
            "unsupported: a negative number raised to a fractional power (Python returns a complex "
            "number)");
      }
      const double result = std::pow(a, b);
      if (std::isinf(result) && std::isfinite(a) && std::isfinite(b))
        fail("numerical result out of range");
      return Value::number(result);
    }
    default: unsupported_operands(op, left, right);
  }
}

Value repeat(const Value& sequence, std::int64_t times) {
  if (sequence.is_string()) {
    const std::string& text = sequence.as_string();
    if (times <= 0 || text.empty()) return Value::string("");
    require_string_size(static_cast<std::size_t>(times) > kMaxStringBytes / text.size()
                            ? kMaxStringBytes + 1
                            : text.size() * static_cast<std::size_t>(times));
    std::string result;
    result.reserve(text.size() * static_cast<std::size_t>(times));
    for (std::int64_t i = 0; i < times; ++i) result += text;
    return Value::string(std::move(result));
  }
  const ValueList& items = sequence.as_list();
  if (times <= 0 || items.empty()) return sequence.is_tuple() ? Value::tuple({}) : Value::list({});
  require_list_size(static_cast<std::size_t>(times) > kMaxListItems / items.size()
                        ? kMaxListItems + 1
                        : items.size() * static_cast<std::size_t>(times));
  ValueList result;
  result.reserve(items.size() * static_cast<std::size_t>(times));
  for (std::int64_t i = 0; i < times; ++i) result.insert(result.end(), items.begin(), items.end());
  return sequence.is_tuple() ? Value::tuple(std::move(result)) : Value::list(std::move(result));
}

// Python's slice index adjustment (PySlice_AdjustIndices) for one bound.
std::int64_t adjust_slice_index(const Value* index, std::int64_t length, std::int64_t step,
                                bool is_start) {
  if (index == nullptr || index->is_none()) {
    if (step < 0) return is_start ? length - 1 : -1;
    return is_start ? 0 : length;
  }
  if (!index->is_integral())
    fail("slice indices must be integers or None or have an __index__ method");
  std::int64_t value = index->as_int();
  if (value < 0) {
    value = value < -length ? (step < 0 ? -1 : 0) : value + length;
  } else if (value >= length) {
    value = step < 0 ? length - 1 : length;
  }
  return value;
}

std::vector<std::size_t> slice_indices(std::size_t size, const Value* start, const Value* stop,
                                       const Value* step) {
  std::int64_t stride = 1;
  if (step != nullptr && !step->is_none()) {
    if (!step->is_integral())
      fail("slice indices must be integers or None or have an __index__ method");
    stride = step->as_int();
    if (stride == 0) fail("slice step cannot be zero");
  }
  const auto length = static_cast<std::int64_t>(size);
  const std::int64_t first = adjust_slice_index(start, length, stride, true);
  const std::int64_t last = adjust_slice_index(stop, length, stride, false);
  std::vector<std::size_t> indices;
  // Compare distances rather than adding the step, which could overflow for huge steps.
  for (std::int64_t i = first; stride > 0 ? i < last : i > last;) {
    indices.push_back(static_cast<std::size_t>(i));
    const std::int64_t remaining = stride > 0 ? last - i : i - last;
    const std::int64_t magnitude = stride > 0 ? stride : -stride;
    if (remaining <= magnitude) break;
    i += stride;
  }
  return indices;
}

std::string lookup_failure(const Value& object, const Value& key) {
  if (key.is_string())
    return cat(describe_for_lookup(object), " has no attribute '", key.as_string(), "'");
  // Jinja quotes the type for missing attributes but not for missing elements.
  const std::string type =
      object.is_none() ? std::string("None") : cat(object.type_name(), " object");
  return cat(type, " has no element ", to_repr(key));
}

// Index into a sequence of `size` items; nullopt when out of range.
std::optional<std::size_t> sequence_index(std::int64_t index, std::size_t size) {
  const auto length = static_cast<std::int64_t>(size);
  if (index < 0) index += length;
  if (index < 0 || index >= length) return std::nullopt;
  return static_cast<std::size_t>(index);
}

}  // namespace

std::string describe_for_lookup(const Value& value) {
  if (value.is_none()) return "'None'";
  return cat("'", value.type_name(), " object'");
}

Value binary_operation(BinaryOp op, const Value& left, const Value& right) {
  if (op == BinaryOp::kConcat) return Value::string(to_str(left) + to_str(right));
  if (left.is_undefined()) fail(left.undefined_message());
  if (right.is_undefined()) fail(right.undefined_message());
  if (left.is_number() && right.is_number()) return arithmetic(op, left, right);
  if (op == BinaryOp::kAdd) {
    if (left.is_string() && right.is_string()) {
      require_string_size(left.as_string().size() + right.as_string().size());
      return Value::string(left.as_string() + right.as_string());
    }
    if (left.is_list() && right.is_list() && left.is_tuple() == right.is_tuple()) {
      ValueList items = left.as_list();
      items.insert(items.end(), right.as_list().begin(), right.as_list().end());
      return left.is_tuple() ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    if (left.is_string() || left.is_list()) {
      fail(cat("can only concatenate ", left.type_name(), " (not \"", right.type_name(), "\") to ",
               left.type_name()));
    }
  }
  if (op == BinaryOp::kMultiply) {
    if ((left.is_string() || left.is_list()) && right.is_integral())
      return repeat(left, right.as_int());
    if ((right.is_string() || right.is_list()) && left.is_integral())
      return repeat(right, left.as_int());
    if (left.is_string() || left.is_list() || right.is_string() || right.is_list()) {
      const Value& other = left.is_string() || left.is_list() ? right : left;
      fail(cat("can't multiply sequence by non-int of type '", other.type_name(), "'"));
    }
  }
  if (op == BinaryOp::kModulo && left.is_string())
    return Value::string(python_percent_format(left.as_string(), right));
  unsupported_operands(op, left, right);
}

Value unary_operation(UnaryOp op, const Value& operand) {
  if (op == UnaryOp::kNot) return Value::boolean(!operand.truthy());
  if (operand.is_undefined()) fail(operand.undefined_message());
  const std::string_view spelling = op == UnaryOp::kNegate ? "-" : "+";
  if (operand.is_integral()) {
    const std::int64_t value = operand.as_int();
    if (op == UnaryOp::kPlus) return Value::integer(value);
    if (value == std::numeric_limits<std::int64_t>::min()) integer_overflow();
    return Value::integer(-value);
  }
  if (operand.is_float())
    return Value::number(op == UnaryOp::kNegate ? -operand.as_double() : operand.as_double());
  fail(cat("bad operand type for unary ", std::string(spelling), ": '", operand.type_name(), "'"));
}

bool chain_comparison(ChainOp op, const Value& left, const Value& right) {
  switch (op) {
    case ChainOp::kIn: return contains(right, left);
    case ChainOp::kNotIn: return !contains(right, left);
    case ChainOp::kEqual: return compare(left, CompareOp::kEqual, right);
    case ChainOp::kNotEqual: return compare(left, CompareOp::kNotEqual, right);
    case ChainOp::kLess: return compare(left, CompareOp::kLess, right);
    case ChainOp::kLessEqual: return compare(left, CompareOp::kLessEqual, right);
    case ChainOp::kGreater: return compare(left, CompareOp::kGreater, right);
    case ChainOp::kGreaterEqual: return compare(left, CompareOp::kGreaterEqual, right);
  }
  return false;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case Value::Kind::kUndefined: return false;  // an undefined value iterates as empty
    case Value::Kind::kString:
      if (!item.is_string()) {
        fail(cat("'in <string>' requires string as left operand, not ", item.type_name()));
      }
      return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::kList:
      for (const Value& element : container.as_list()) {
        if (equals(element, item)) return true;
      }
      return false;
    case Value::Kind::kDict:
      if ((item.is_sequence() && !item.is_tuple()) || item.is_dict()) {
        fail(cat("unhashable type: '", item.type_name(), "'"));
      }
      return container.as_dict().find(item) != nullptr;
    default: fail(cat("argument of type '", container.type_name(), "' is not iterable"));
  }
}

Value get_attribute(const Value& object, std::string_view name) {
  if (object.is_undefined()) fail(object.undefined_message());
  const std::string unsafe = cat("access to attribute '", std::string(name), "' of '",
                                 object.type_name(), "' object is unsafe.");
  if (!name.empty() && name[0] == '_') return Value::undefined(unsafe);
  switch (find_method(object, name)) {
    case MethodLookup::kMethod: return bound_method(object, name);
    case MethodLookup::kUnsafe: return Value::undefined(unsafe);
    case MethodLookup::kNone: break;
  }
  if (object.is_dict()) {
    if (const Value* value = object.as_dict().find(name)) return *value;
  }
  if (object.is_object()) {
    if (auto value = object.as_object().attribute(name)) return *value;
  }
  return Value::undefined(describe_for_lookup(object) +
                          cat(" has no attribute '", std::string(name), "'"));
}

Value get_item(const Value& object, const Value& key) {
  if (object.is_undefined()) fail(object.undefined_message());
  switch (object.kind()) {
    case Value::Kind::kList:
      if (object.is_list() && key.is_integral()) {
        const ValueList& items = object.as_list();
        if (const auto index = sequence_index(key.as_int(), items.size())) return items[*index];
        return Value::undefined(lookup_failure(object, key));
      }
      break;
    case Value::Kind::kString:
      if (key.is_integral()) {
        const std::u32string characters = unicode::to_code_points(object.as_string());
        if (const auto index = sequence_index(key.as_int(), characters.size())) {
          return Value::string(unicode::from_code_points(characters.substr(*index, 1)));
        }
        return Value::undefined(lookup_failure(object, key));
      }
      break;
    case Value::Kind::kDict:
      if (const Value* value = object.as_dict().find(key)) return *value;
      break;
    default: break;
  }
  if (key.is_string()) return get_attribute(object, key.as_string());
  return Value::undefined(lookup_failure(object, key));
}

Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step) {
  if (object.is_undefined()) fail(object.undefined_message());
  if (object.is_string()) {
    const std::u32string characters = unicode::to_code_points(object.as_string());
    std::u32string result;
    for (std::size_t index : slice_indices(characters.size(), start, stop, step))
      result.push_back(characters[index]);
    return Value::string(unicode::from_code_points(result));
  }
  if (object.is_list()) {
    const ValueList& items = object.as_list();
    ValueList result;
    for (std::size_t index : slice_indices(items.size(), start, stop, step))
      result.push_back(items[index]);
    return object.is_tuple() ? Value::tuple(std::move(result)) : Value::list(std::move(result));
  }
  // Jinja slices with Python's own subscript, so these are Python's errors, not undefined.
  if (object.is_dict()) fail("unhashable type: 'slice'");
  fail(cat("'", object.type_name(), "' object is not subscriptable"));
}

ValueList iterate(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return {};
    case Value::Kind::kList: return value.as_list();
    case Value::Kind::kDict: {
      ValueList keys;
      keys.reserve(value.as_dict().size());
      for (const auto& entry : value.as_dict().entries()) keys.push_back(entry.first);
      return keys;
    }
    case Value::Kind::kString: {
      ValueList characters;
      const std::string& text = value.as_string();
      for (std::size_t pos = 0; pos < text.size();) {
        std::string character;
        unicode::append(character, unicode::decode(text, pos));
        characters.push_back(Value::string(std::move(character)));
      }
      return characters;
    }
    default: fail(cat("'", value.type_name(), "' object is not iterable"));
  }
}

std::size_t length(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kUndefined: return 0;
    case Value::Kind::kString: return unicode::length(value.as_string());
    case Value::Kind::kList:
      if (value.sequence_kind() == SequenceKind::kGenerator)
        fail("object of type 'generator' has no len()");
      return value.as_list().size();
    case Value::Kind::kDict: return value.as_dict().size();
    default: fail(cat("object of type '", value.type_name(), "' has no len()"));
  }
}

ValueList unpack(const Value& value, std::size_t count) {
  if (!value.is_sequence() && !value.is_dict() && !value.is_string() && !value.is_undefined()) {
    fail(cat("cannot unpack non-iterable ", value.type_name(), " object"));
  }
  ValueList items = iterate(value);
  if (items.size() < count) {
    fail(cat("not enough values to unpack (expected ", std::to_string(count), ", got ",
             std::to_string(items.size()), ")"));
  }
  if (items.size() > count)
    fail(cat("too many values to unpack (expected ", std::to_string(count), ")"));
  return items;
}

}  // namespace lpx::core::jinja
