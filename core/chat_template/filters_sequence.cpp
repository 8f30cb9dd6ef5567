// Sequence filters: over lists, strings and mappings. Like Jinja,
// map/select/reject/selectattr/rejectattr/ unique/batch/items/reverse produce generators (always
// true, no length), so templates that rely on `|list` behave the same here.
#include "chat_template/filter_library.hpp"

#include <cmath>
#include <unordered_map>

#include "chat_template/filters.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/methods.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/predicates.hpp"
#include "chat_template/safe_sort.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja::sequence_filters {
namespace {

std::string callee(std::string_view filter) { return cat("filter '", std::string(filter), "'"); }

Value generator(ValueList items) {
  return Value::sequence(std::move(items), SequenceKind::kGenerator);
}

Value ignore_case(const Value& value) {
  return value.is_string() ? Value::string(unicode::lower(value.as_string())) : value;
}

// Jinja's make_attrgetter: "a.b.0" looks up a, then b, then index 0, each like `x[part]`.
class AttributeGetter {
 public:
  explicit AttributeGetter(const Value* attribute, bool lower_case = false,
                           const Value* fallback = nullptr)
      : lower_case_(lower_case), fallback_(fallback) {
    if (attribute == nullptr || attribute->is_none()) return;
    if (!attribute->is_string()) {
      parts_.push_back(*attribute);
      return;
    }
    const std::string& path = attribute->as_string();
    std::size_t start = 0;
    while (true) {
      const std::size_t dot = path.find('.', start);
      const std::string part =
          path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      const bool digits =
          !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
      parts_.push_back(digits && part.size() < 19 ? Value::integer(std::stoll(part))
                                                  : Value::string(part));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
  }

  Value operator()(Value item) const {
    for (const Value& part : parts_) {
      item = get_item(item, part);
      if (fallback_ != nullptr && !fallback_->is_none() && item.is_undefined()) item = *fallback_;
    }
    return lower_case_ ? ignore_case(item) : item;
  }

 private:
  std::vector<Value> parts_;
  bool lower_case_;
  const Value* fallback_;
};

// A hash consistent with equals() for the values Python can hash.
std::size_t hash_value(const Value& value, int depth = 0) {
  require_value_depth(depth);
  switch (value.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return 0x9e3779b9;
    case Value::Kind::kBool:
    case Value::Kind::kInt: return std::hash<std::int64_t>{}(value.as_int());
    case Value::Kind::kFloat: {
      const double number = value.as_double();
      if (std::trunc(number) == number && std::fabs(number) < 9.2e18) {
        return std::hash<std::int64_t>{}(static_cast<std::int64_t>(number));  // 1.0 == 1
      }
      return std::hash<double>{}(number);
    }
    case Value::Kind::kString: return std::hash<std::string>{}(value.as_string());
    case Value::Kind::kList:
      if (value.is_tuple()) {
        std::size_t hash = 0x345678;
        for (const Value& item : value.as_list())
          hash = hash * 1000003 ^ hash_value(item, depth + 1);
        return hash;
      }
      break;
    case Value::Kind::kObject: return std::hash<const void*>{}(value.object_ptr().get());
    default: break;
  }
  fail(cat("unhashable type: '", value.type_name(), "'"));
}

ValueList select_or_reject(const Value& input, const CallArguments& arguments, bool select,
                           bool by_attribute, std::string_view name) {
  if (!input.truthy()) return {};  // Jinja does not even look at the arguments then
  std::size_t offset = 0;
  AttributeGetter getter(nullptr);
  if (by_attribute) {
    if (arguments.positional.empty()) fail("Missing parameter for attribute name");
    getter = AttributeGetter(&arguments.positional[0]);
    offset = 1;
  }
  TestFunction test = nullptr;
  CallArguments test_arguments;
  if (arguments.positional.size() > offset) {
    const Value& test_name = arguments.positional[offset];
    test = test_name.is_string() ? find_test(test_name.as_string()) : nullptr;
    if (test == nullptr) fail(cat("No test named ", to_repr(test_name), "."));
    test_arguments.positional.assign(
        arguments.positional.begin() + static_cast<std::ptrdiff_t>(offset) + 1,
        arguments.positional.end());
    test_arguments.keyword = arguments.keyword;
  } else if (!arguments.keyword.empty()) {
    fail(callee(name) + " got keyword arguments but no test");
  }
  ValueList kept;
  for (const Value& item : iterate(input)) {
    const Value subject = getter(item);
    const bool passed = test ? test(subject, test_arguments) : subject.truthy();
    if (passed == select) kept.push_back(item);
  }
  return kept;
}

// Python's max()/min() keep the first of equal items.
Value min_or_max(const Value& input, const CallArguments& arguments, bool maximum,
                 std::string_view name) {
  Parameters p(callee(name), arguments, {"case_sensitive", "attribute"});
  const ValueList items = iterate(input);
  if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
  const AttributeGetter key(p.get(1), !p.get_or(0, Value::boolean(false)).truthy());
  std::size_t best = 0;
  Value best_key = key(items[0]);
  for (std::size_t i = 1; i < items.size(); ++i) {
    Value candidate = key(items[i]);
    if (compare(candidate, maximum ? CompareOp::kGreater : CompareOp::kLess, best_key)) {
      best = i;
      best_key = std::move(candidate);
    }
  }
  return items[best];
}

}  // namespace

Value attr(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("attr"), arguments, {"name"});
  const Value* name = p.get(0);
  if (name == nullptr || !name->is_string()) fail("attribute name must be a string");
  if (input.is_undefined()) fail(input.undefined_message());
  // Only real attributes: unlike `x.name`, attr() never falls back to dict items.
  if (find_method(input, name->as_string()) != MethodLookup::kNone || input.is_object()) {
    return get_attribute(input, name->as_string());
  }
  return Value::undefined(describe_for_lookup(input) +
                          cat(" has no attribute '", name->as_string(), "'"));
}

Value batch(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("batch"), arguments, {"linecount", "fill_with"});
  const Value count_value = p.get_or(0, Value::none());
  if (!count_value.is_integral()) fail("batch size must be an integer");
  const std::int64_t count = count_value.as_int();
  const Value fill = p.get_or(1, Value::none());
  ValueList batches;
  ValueList current;
  for (const Value& item : iterate(input)) {
    if (static_cast<std::int64_t>(current.size()) == count) {
      batches.push_back(Value::list(std::move(current)));
      current.clear();
    }
    current.push_back(item);
  }
  if (!current.empty()) {
    while (!fill.is_none() && static_cast<std::int64_t>(current.size()) < count)
      current.push_back(fill);
    batches.push_back(Value::list(std::move(current)));
  }
  return generator(std::move(batches));
}

Value dictsort(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("dictsort"), arguments, {"case_sensitive", "by", "reverse"});
  if (!input.is_dict()) fail(cat("filter 'dictsort' needs a mapping, not ", input.type_name()));
  const bool case_sensitive = p.get_or(0, Value::boolean(false)).truthy();
  const Value by = p.get_or(1, Value::string("key"));
  if (!by.is_string() || (by.as_string() != "key" && by.as_string() != "value")) {
    fail("You can only sort by either \"key\" or \"value\"");
  }
  const std::size_t position = by.as_string() == "key" ? 0 : 1;
  const bool reverse = p.get_or(2, Value::boolean(false)).truthy();
  ValueList pairs;
  for (const auto& [key, value] : input.as_dict().entries())
    pairs.push_back(Value::tuple({key, value}));
  auto sort_key = [&](const Value& pair) {
    const Value& part = pair.as_list()[position];
    return case_sensitive ? part : ignore_case(part);
  };
  safe_stable_sort(pairs, [&](const Value& a, const Value& b) {
    return reverse ? compare(sort_key(b), CompareOp::kLess, sort_key(a))
                   : compare(sort_key(a), CompareOp::kLess, sort_key(b));
  });
  return Value::list(std::move(pairs));
}

Value first(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("first"), arguments, {});
  const ValueList items = iterate(input);
  return items.empty() ? Value::undefined("No first item, sequence was empty.") : items.front();
}

Value last(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("last"), arguments, {});
  if (input.is_sequence() && input.sequence_kind() == SequenceKind::kGenerator) {
    fail("'generator' object is not reversible");
  }
  if (!input.is_sequence() && !input.is_dict() && !input.is_string() && !input.is_undefined()) {
    fail(cat("'", input.type_name(), "' object is not reversible"));
  }
  const ValueList items = iterate(input);
  return items.empty() ? Value::undefined("No last item, sequence was empty.") : items.back();
}

Value join(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("join"), arguments, {"d", "attribute"});
  const std::string separator = to_str(p.get_or(0, Value::string("")));
  const AttributeGetter getter(p.get(1));
  std::string out;
  bool first_item = true;
  for (const Value& item : iterate(input)) {
    if (!first_item) out += separator;
    first_item = false;
    out += to_str(getter(item));
    require_string_size(out.size());
  }
  return Value::string(std::move(out));
}

Value length(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("length"), arguments, {});
  return Value::integer(static_cast<std::int64_t>(jinja::length(input)));
}

Value list(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("list"), arguments, {});
  return Value::list(iterate(input));
}

Value items(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("items"), arguments, {});
  if (input.is_undefined()) return generator({});
  if (!input.is_dict()) fail("Can only get item pairs from a mapping.");
  ValueList pairs;
  for (const auto& [key, value] : input.as_dict().entries())
    pairs.push_back(Value::tuple({key, value}));
  return generator(std::move(pairs));
}

Value map(const Value& input, const CallArguments& arguments) {
  ValueList mapped;
  if (arguments.positional.empty()) {
    Parameters p(callee("map"), arguments, {"attribute", "default"});
    if (!p.has(0)) fail("map requires a filter argument");
    if (!input.truthy()) return generator({});
    const AttributeGetter getter(p.get(0), false, p.get(1));
    for (const Value& item : iterate(input)) mapped.push_back(getter(item));
    return generator(std::move(mapped));
  }
  const Value& name = arguments.positional[0];
  const FilterFunction filter = name.is_string() ? find_filter(name.as_string()) : nullptr;
  if (filter == nullptr) fail(cat("No filter named ", to_repr(name), "."));
  CallArguments filter_arguments;
  filter_arguments.positional.assign(arguments.positional.begin() + 1, arguments.positional.end());
  filter_arguments.keyword = arguments.keyword;
  if (!input.truthy()) return generator({});
  for (const Value& item : iterate(input)) mapped.push_back(filter(item, filter_arguments));
  return generator(std::move(mapped));
}

Value select(const Value& input, const CallArguments& arguments) {
  return generator(select_or_reject(input, arguments, true, false, "select"));
}

Value reject(const Value& input, const CallArguments& arguments) {
  return generator(select_or_reject(input, arguments, false, false, "reject"));
}

Value selectattr(const Value& input, const CallArguments& arguments) {
  return generator(select_or_reject(input, arguments, true, true, "selectattr"));
}

Value rejectattr(const Value& input, const CallArguments& arguments) {
  return generator(select_or_reject(input, arguments, false, true, "rejectattr"));
}

Value sort(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("sort"), arguments, {"reverse", "case_sensitive", "attribute"});
  const bool reverse = p.get_or(0, Value::boolean(false)).truthy();
  const bool lower_case = !p.get_or(1, Value::boolean(false)).truthy();
  // "a,b" sorts by a, then b.
  std::vector<AttributeGetter> getters;
  const Value attribute = p.get_or(2, Value::none());
  if (attribute.is_string()) {
    const std::string& names = attribute.as_string();
    for (std::size_t start = 0;;) {
      const std::size_t comma = names.find(',', start);
      const Value part = Value::string(
          names.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      getters.emplace_back(&part, lower_case);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  } else {
    getters.emplace_back(&attribute, lower_case);
  }
  struct Keyed {
    Value key;
    Value item;
  };
  std::vector<Keyed> keyed;
  for (const Value& item : iterate(input)) {
    ValueList keys;
    for (const AttributeGetter& getter : getters) keys.push_back(getter(item));
    keyed.push_back(Keyed{Value::list(std::move(keys)), item});
  }
  safe_stable_sort(keyed, [reverse](const Keyed& a, const Keyed& b) {
    return reverse ? compare(b.key, CompareOp::kLess, a.key)
                   : compare(a.key, CompareOp::kLess, b.key);
  });
  ValueList sorted;
  sorted.reserve(keyed.size());
  for (Keyed& entry : keyed) sorted.push_back(std::move(entry.item));
  return Value::list(std::move(sorted));
}

Value unique(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("unique"), arguments, {"case_sensitive", "attribute"});
  const AttributeGetter key(p.get(1), !p.get_or(0, Value::boolean(false)).truthy());
  std::unordered_map<std::size_t, ValueList> seen;
  ValueList kept;
  for (const Value& item : iterate(input)) {
    Value item_key = key(item);
    ValueList& bucket = seen[hash_value(item_key)];
    bool duplicate = false;
    for (const Value& earlier : bucket) duplicate = duplicate || equals(earlier, item_key);
    if (duplicate) continue;
    bucket.push_back(std::move(item_key));
    kept.push_back(item);
  }
  return generator(std::move(kept));
}

Value reverse(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("reverse"), arguments, {});
  if (input.is_string()) {
    std::u32string characters = unicode::to_code_points(input.as_string());
    return Value::string(
        unicode::from_code_points(std::u32string(characters.rbegin(), characters.rend())));
  }
  if (!input.is_sequence() && !input.is_dict() && !input.is_undefined())
    fail("argument must be iterable");
  ValueList items = iterate(input);
  ValueList reversed(items.rbegin(), items.rend());
  // reversed() of a list is an iterator; a generator cannot be reversed, so Jinja builds a list.
  if (input.is_sequence() && input.sequence_kind() == SequenceKind::kGenerator)
    return Value::list(std::move(reversed));
  return generator(std::move(reversed));
}

Value max(const Value& input, const CallArguments& arguments) {
  return min_or_max(input, arguments, true, "max");
}

Value min(const Value& input, const CallArguments& arguments) {
  return min_or_max(input, arguments, false, "min");
}

Value sum(const Value& input, const CallArguments& arguments) {
  Parameters p(callee("sum"), arguments, {"attribute", "start"});
  const AttributeGetter getter(p.get(0));
  Value total = p.get_or(1, Value::integer(0));
  for (const Value& item : iterate(input))
    total = binary_operation(BinaryOp::kAdd, total, getter(item));
  return total;
}

}  // namespace lpx::core::jinja::sequence_filters
