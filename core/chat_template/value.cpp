#include "chat_template/value.hpp"

#include <algorithm>
#include <cmath>

#include <boost/json/value.hpp>

#include "chat_template/limits.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {

struct Value::ListData {
  ValueList items;
  SequenceKind kind = SequenceKind::kList;
  int depth = 1;
};

Value Value::undefined(std::string why) {
  Value value;
  value.data_ = UndefinedData{std::make_shared<const std::string>(std::move(why))};
  return value;
}

Value Value::none() {
  Value value;
  value.data_ = NoneData{};
  return value;
}

Value Value::boolean(bool flag) {
  Value value;
  value.data_ = flag;
  return value;
}

Value Value::integer(std::int64_t number) {
  Value value;
  value.data_ = number;
  return value;
}

Value Value::number(double number) {
  Value value;
  value.data_ = number;
  return value;
}

Value Value::string(std::string text) {
  require_string_size(text.size());
  Value value;
  value.data_ = std::make_shared<const std::string>(std::move(text));
  return value;
}

Value Value::list(ValueList items) { return sequence(std::move(items), SequenceKind::kList); }

Value Value::tuple(ValueList items) { return sequence(std::move(items), SequenceKind::kTuple); }

Value Value::sequence(ValueList items, SequenceKind kind) {
  require_list_size(items.size());
  int depth = 1;
  for (const Value& item : items) depth = std::max(depth, item.depth() + 1);
  require_value_depth(depth);
  Value value;
  value.data_ = std::make_shared<const ListData>(ListData{std::move(items), kind, depth});
  return value;
}

Value Value::dict(Dict entries) {
  require_list_size(entries.size());
  require_value_depth(entries.depth());
  Value value;
  value.data_ = std::make_shared<const Dict>(std::move(entries));
  return value;
}

Value Value::object(std::shared_ptr<Object> object) {
  Value value;
  value.data_ = std::move(object);
  return value;
}

SequenceKind Value::sequence_kind() const { return std::get<ListPtr>(data_)->kind; }

bool Value::is_list() const {
  return is_sequence() &&
         (sequence_kind() == SequenceKind::kList || sequence_kind() == SequenceKind::kTuple);
}

bool Value::is_tuple() const { return is_sequence() && sequence_kind() == SequenceKind::kTuple; }

const ValueList& Value::as_list() const { return std::get<ListPtr>(data_)->items; }

int Value::depth() const {
  switch (kind()) {
    case Kind::kList: return std::get<ListPtr>(data_)->depth;
    case Kind::kDict: return as_dict().depth();
    case Kind::kObject: return as_object().depth();
    default: return 0;
  }
}

std::int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<std::int64_t>(data_);
}

double Value::as_double() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

std::string Value::undefined_message() const {
  const auto& why = std::get<UndefinedData>(data_).why;
  return why ? *why : std::string("value is undefined");
}

bool Value::truthy() const {
  switch (kind()) {
    case Kind::kUndefined:
    case Kind::kNone: return false;
    case Kind::kBool: return as_bool();
    case Kind::kInt: return as_int() != 0;
    case Kind::kFloat: return as_double() != 0.0;
    case Kind::kString: return !as_string().empty();
    case Kind::kList: return sequence_kind() == SequenceKind::kGenerator || !as_list().empty();
    case Kind::kDict: return !as_dict().empty();
    case Kind::kObject: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind()) {
    case Kind::kUndefined: return "Undefined";
    case Kind::kNone: return "NoneType";
    case Kind::kBool: return "bool";
    case Kind::kInt: return "int";
    case Kind::kFloat: return "float";
    case Kind::kString: return "str";
    case Kind::kList:
      switch (sequence_kind()) {
        case SequenceKind::kList: return "list";
        case SequenceKind::kTuple: return "tuple";
        case SequenceKind::kGenerator: return "generator";
        case SequenceKind::kDictKeys: return "dict_keys";
        case SequenceKind::kDictValues: return "dict_values";
        case SequenceKind::kDictItems: return "dict_items";
      }
      return "list";
    case Kind::kDict: return "dict";
    case Kind::kObject: return as_object().type_name();
  }
  return "object";
}

// --- Dict -------------------------------------------------------------------------------------

std::optional<std::size_t> Dict::index_of(const Value& key) const {
  if (key.is_string()) {
    const auto found = string_keys_.find(std::string_view(key.as_string()));
    if (found == string_keys_.end()) return std::nullopt;
    return found->second;
  }
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].first.is_string() && equals(entries_[i].first, key)) return i;
  }
  return std::nullopt;
}

const Value* Dict::find(std::string_view key) const {
  const auto found = string_keys_.find(key);
  return found == string_keys_.end() ? nullptr : &entries_[found->second].second;
}

const Value* Dict::find(const Value& key) const {
  const auto index = index_of(key);
  return index ? &entries_[*index].second : nullptr;
}

void Dict::set(Value key, Value value) {
  if ((key.is_sequence() && !key.is_tuple()) || key.is_dict())
    fail(cat("unhashable type: '", key.type_name(), "'"));
  if (const auto index = index_of(key)) {
    depth_ = std::max(depth_, value.depth() + 1);
    entries_[*index].second = std::move(value);
    return;
  }
  depth_ = std::max({depth_, key.depth() + 1, value.depth() + 1});
  if (key.is_string()) string_keys_.emplace(key.as_string(), entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

std::vector<Dict::Entry> Dict::take_entries() {
  std::vector<Entry> taken = std::move(entries_);
  entries_.clear();
  string_keys_.clear();
  depth_ = 1;
  return taken;
}

// --- Object -----------------------------------------------------------------------------------

std::optional<Value> Object::attribute(std::string_view) const { return std::nullopt; }

bool Object::assign_attribute(const std::string&, Value) { return false; }

Value Object::call(Renderer&, const CallArguments&) const {
  fail(cat("'", type_name(), "' object is not callable"));
}

// --- comparison -------------------------------------------------------------------------------

namespace {

// Python compares int and float exactly, without rounding the int to a double first.
// Returns -1, 0 or 1; NaN is handled by the caller.
int compare_int_with_double(std::int64_t integer, double real) {
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (real >= kTwoTo63) return -1;
  if (real < -kTwoTo63) return 1;
  const double whole = std::trunc(real);
  const auto whole_int = static_cast<std::int64_t>(whole);
  if (integer != whole_int) return integer < whole_int ? -1 : 1;
  const double fraction = real - whole;
  if (fraction > 0) return -1;
  if (fraction < 0) return 1;
  return 0;
}

// Numeric three-way comparison; nullopt when either side is NaN (all orderings are false).
std::optional<int> compare_numbers(const Value& left, const Value& right) {
  if (left.is_integral() && right.is_integral()) {
    const std::int64_t a = left.as_int();
    const std::int64_t b = right.as_int();
    return a < b ? -1 : (a > b ? 1 : 0);
  }
  if (std::isnan(left.as_double()) || std::isnan(right.as_double())) return std::nullopt;
  if (left.is_integral()) return compare_int_with_double(left.as_int(), right.as_double());
  if (right.is_integral()) return -compare_int_with_double(right.as_int(), left.as_double());
  const double a = left.as_double();
  const double b = right.as_double();
  return a < b ? -1 : (a > b ? 1 : 0);
}

bool holds(int three_way, CompareOp op) {
  switch (op) {
    case CompareOp::kEqual: return three_way == 0;
    case CompareOp::kNotEqual: return three_way != 0;
    case CompareOp::kLess: return three_way < 0;
    case CompareOp::kLessEqual: return three_way <= 0;
    case CompareOp::kGreater: return three_way > 0;
    case CompareOp::kGreaterEqual: return three_way >= 0;
  }
  return false;
}

}  // namespace

std::string_view compare_op_symbol(CompareOp op) {
  switch (op) {
    case CompareOp::kEqual: return "==";
    case CompareOp::kNotEqual: return "!=";
    case CompareOp::kLess: return "<";
    case CompareOp::kLessEqual: return "<=";
    case CompareOp::kGreater: return ">";
    case CompareOp::kGreaterEqual: return ">=";
  }
  return "?";
}

bool equals(const Value& left, const Value& right, int depth) {
  require_value_depth(depth);
  if (left.is_number() && right.is_number()) {
    const auto order = compare_numbers(left, right);
    return order && *order == 0;
  }
  if (left.kind() != right.kind()) return false;
  switch (left.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return true;
    case Value::Kind::kString: return left.as_string() == right.as_string();
    case Value::Kind::kList: {
      if (left.sequence_kind() != right.sequence_kind()) return false;
      if (left.sequence_kind() == SequenceKind::kGenerator)
        return &left.as_list() == &right.as_list();
      const ValueList& a = left.as_list();
      const ValueList& b = right.as_list();
      if (a.size() != b.size()) return false;
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (!equals(a[i], b[i], depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::kDict: {
      const Dict& a = left.as_dict();
      const Dict& b = right.as_dict();
      if (a.size() != b.size()) return false;
      for (const auto& [key, value] : a.entries()) {
        const Value* other = b.find(key);
        if (other == nullptr || !equals(value, *other, depth + 1)) return false;
      }
      return true;
    }
    case Value::Kind::kObject: return left.object_ptr() == right.object_ptr();
    default: return false;  // numbers were handled above
  }
}

bool compare(const Value& left, CompareOp op, const Value& right, int depth) {
  if (op == CompareOp::kEqual) return equals(left, right, depth);
  if (op == CompareOp::kNotEqual) return !equals(left, right, depth);
  require_value_depth(depth);
  if (left.is_undefined()) fail(left.undefined_message());
  if (right.is_undefined()) fail(right.undefined_message());
  if (left.is_number() && right.is_number()) {
    const auto order = compare_numbers(left, right);
    return order && holds(*order, op);
  }
  if (left.is_string() && right.is_string()) {
    // Byte order of UTF-8 is code point order, which is what Python compares.
    return holds(left.as_string().compare(right.as_string()), op);
  }
  if (left.is_list() && right.is_list() && left.sequence_kind() == right.sequence_kind()) {
    const ValueList& a = left.as_list();
    const ValueList& b = right.as_list();
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
      if (!equals(a[i], b[i], depth + 1)) return compare(a[i], op, b[i], depth + 1);
    }
    return holds(a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0), op);
  }
  fail(cat("'", std::string(compare_op_symbol(op)), "' not supported between instances of '",
           left.type_name(), "' and '", right.type_name(), "'"));
}

// --- JSON input -------------------------------------------------------------------------------

Value from_json(const boost::json::value& json, int depth) {
  require_value_depth(depth);
  switch (json.kind()) {
    case boost::json::kind::null: return Value::none();
    case boost::json::kind::bool_: return Value::boolean(json.get_bool());
    case boost::json::kind::int64: return Value::integer(json.get_int64());
    case boost::json::kind::uint64: {
      const std::uint64_t number = json.get_uint64();
      if (number <= static_cast<std::uint64_t>(INT64_MAX)) {
        return Value::integer(static_cast<std::int64_t>(number));
      }
      return Value::number(static_cast<double>(number));  // Python would keep an exact big int
    }
    case boost::json::kind::double_: return Value::number(json.get_double());
    case boost::json::kind::string: return Value::string(std::string(json.get_string()));
    case boost::json::kind::array: {
      const auto& array = json.get_array();
      require_list_size(array.size());
      ValueList items;
      items.reserve(array.size());
      for (const auto& item : array) items.push_back(from_json(item, depth + 1));
      return Value::list(std::move(items));
    }
    case boost::json::kind::object: {
      const auto& object = json.get_object();
      require_list_size(object.size());
      Dict dict;
      for (const auto& member : object) {
        dict.set(Value::string(std::string(member.key())), from_json(member.value(), depth + 1));
      }
      return Value::dict(std::move(dict));
    }
  }
  return Value::none();
}

}  // namespace lpx::core::jinja
