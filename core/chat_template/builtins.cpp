#include "chat_template/builtins.hpp"

#include <array>
#include <memory>
#include <unordered_map>

#include "chat_template/operators.hpp"
#include "chat_template/renderer.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

// Jinja's sandbox refuses ranges longer than this.
constexpr std::int64_t kMaxRange = 100000;

std::int64_t integer_argument(const Value& value) {
  if (!value.is_integral())
    fail(cat("'", value.type_name(), "' object cannot be interpreted as an integer"));
  return value.as_int();
}

Value range(Renderer&, const CallArguments& arguments) {
  if (!arguments.keyword.empty()) fail("range() takes no keyword arguments");
  const ValueList& a = arguments.positional;
  if (a.empty() || a.size() > 3)
    fail(cat("range expected at most 3 arguments, got ", std::to_string(a.size())));
  const std::int64_t start = a.size() == 1 ? 0 : integer_argument(a[0]);
  const std::int64_t stop = integer_argument(a.size() == 1 ? a[0] : a[1]);
  const std::int64_t step = a.size() == 3 ? integer_argument(a[2]) : 1;
  if (step == 0) fail("range() arg 3 must not be zero");
  // Count in unsigned 64-bit arithmetic: start, stop and step are arbitrary 64-bit values.
  const bool ascending = step > 0;
  const auto distance = ascending
                            ? static_cast<std::uint64_t>(stop) - static_cast<std::uint64_t>(start)
                            : static_cast<std::uint64_t>(start) - static_cast<std::uint64_t>(stop);
  const auto magnitude =
      ascending ? static_cast<std::uint64_t>(step) : 0 - static_cast<std::uint64_t>(step);
  const bool empty = ascending ? stop <= start : stop >= start;
  const std::uint64_t count =
      empty ? 0 : distance / magnitude + (distance % magnitude != 0 ? 1 : 0);
  if (count > static_cast<std::uint64_t>(kMaxRange)) {
    fail(cat("Range too big. The sandbox blocks ranges larger than MAX_RANGE (",
             std::to_string(kMaxRange), ")."));
  }
  ValueList items;
  items.reserve(count);
  std::int64_t value = start;
  for (std::uint64_t i = 0; i < count; ++i) {
    items.push_back(Value::integer(value));
    if (i + 1 < count) value += step;  // stays between start and stop, so it cannot overflow
  }
  return Value::list(std::move(items));
}

// dict(mapping_or_pairs, **keywords), also the initial content of namespace(...).
Dict dict_from_arguments(const CallArguments& arguments, std::string_view callee) {
  if (arguments.positional.size() > 1) {
    fail(std::string(callee) +
         cat(" expected at most 1 argument, got ", std::to_string(arguments.positional.size())));
  }
  Dict dict;
  if (!arguments.positional.empty()) {
    const Value& source = arguments.positional[0];
    if (source.is_dict()) {
      dict = source.as_dict();
    } else {
      for (const Value& pair : iterate(source)) {
        const ValueList key_value = unpack(pair, 2);
        dict.set(key_value[0], key_value[1]);
      }
    }
  }
  for (const auto& [name, value] : arguments.keyword) dict.set(Value::string(name), value);
  return dict;
}

class Namespace final : public Object {
 public:
  explicit Namespace(Dict attributes) : attributes_(std::move(attributes)) {}
  std::string type_name() const override { return "Namespace"; }
  std::string repr() const override {
    return repr_once(this, "<Namespace {...}>",
                     [this] { return cat("<Namespace ", to_repr(Value::dict(attributes_)), ">"); });
  }
  std::optional<Value> attribute(std::string_view name) const override {
    if (const Value* value = attributes_.find(name)) return *value;
    return std::nullopt;
  }
  bool assign_attribute(const std::string& name, Value value) override {
    attributes_.set(Value::string(name), std::move(value));
    return true;
  }
  void release_contents(ValueList& pile) override {
    for (auto& [key, value] : attributes_.take_entries()) {
      pile.push_back(std::move(key));
      pile.push_back(std::move(value));
    }
  }

 private:
  Dict attributes_;
};

// cycler(a, b, c): .next() returns the items in turn, .current peeks, .reset() starts over.
class Cycler final : public Object, public std::enable_shared_from_this<Cycler> {
 public:
  explicit Cycler(ValueList items) : items_(std::move(items)) {}
  std::string type_name() const override { return "Cycler"; }
  std::string repr() const override { return "<Cycler>"; }
  std::optional<Value> attribute(std::string_view name) const override {
    if (name == "current") return items_[position_];
    const auto self = std::const_pointer_cast<Cycler>(shared_from_this());
    if (name == "next") {
      return Value::object(
          std::make_shared<NativeFunction>("next", [self](Renderer&, const CallArguments&) {
            Value item = self->items_[self->position_];
            self->position_ = (self->position_ + 1) % self->items_.size();
            return item;
          }));
    }
    if (name == "reset") {
      return Value::object(
          std::make_shared<NativeFunction>("reset", [self](Renderer&, const CallArguments&) {
            self->position_ = 0;
            return Value::none();
          }));
    }
    return std::nullopt;
  }
  void release_contents(ValueList& pile) override {
    for (Value& item : items_) pile.push_back(std::move(item));
    items_.assign(1, Value::none());  // keeps .current valid
    position_ = 0;
  }

 private:
  ValueList items_;
  std::size_t position_ = 0;
};

// joiner(sep): returns "" the first time it is called and `sep` afterwards.
class Joiner final : public Object {
 public:
  explicit Joiner(std::string separator) : separator_(std::move(separator)) {}
  std::string type_name() const override { return "Joiner"; }
  std::string repr() const override { return "<Joiner>"; }
  bool callable() const override { return true; }
  Value call(Renderer&, const CallArguments&) const override {
    if (!used_) {
      used_ = true;
      return Value::string("");
    }
    return Value::string(separator_);
  }

 private:
  std::string separator_;
  mutable bool used_ = false;
};

// Python's datetime.strftime on a naive local time: %f is the microseconds (always 0 here),
// %z and %Z are empty, the rest is C's strftime.
std::string python_strftime(const std::string& format, const std::tm& time) {
  std::string c_format;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '%' && i + 1 < format.size()) {
      const char directive = format[i + 1];
      ++i;
      if (directive == 'f')
        c_format += "000000";
      else if (directive != 'z' && directive != 'Z')
        c_format += std::string("%") + directive;
      continue;
    }
    c_format.push_back(format[i]);
  }
  if (c_format.empty()) return "";
    // The format comes from the template, so it cannot be a literal.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  for (std::size_t capacity = 256; capacity <= (std::size_t{1} << 20); capacity *= 4) {
    std::string buffer(capacity, '\0');
    const std::size_t written =
        std::strftime(buffer.data(), buffer.size(), c_format.c_str(), &time);
    if (written > 0) {
      buffer.resize(written);
      return buffer;
    }
  }
#pragma GCC diagnostic pop
  return "";  // strftime cannot tell "empty" from "too long"; both print nothing
}

std::unordered_map<std::string, Value> make_globals() {
  std::unordered_map<std::string, Value> globals;
  auto add = [&](const std::string& name, NativeFunction::Function function) {
    globals.emplace(name,
                    Value::object(std::make_shared<NativeFunction>(name, std::move(function))));
  };
  add("range", range);
  add("dict", [](Renderer&, const CallArguments& arguments) {
    return Value::dict(dict_from_arguments(arguments, "dict"));
  });
  add("namespace", [](Renderer& renderer, const CallArguments& arguments) {
    auto object = std::make_shared<Namespace>(dict_from_arguments(arguments, "namespace"));
    renderer.track(object);
    return Value::object(std::move(object));
  });
  add("cycler", [](Renderer& renderer, const CallArguments& arguments) {
    if (arguments.positional.empty()) fail("cycler() needs at least one item");
    auto object = std::make_shared<Cycler>(arguments.positional);
    renderer.track(object);
    return Value::object(std::move(object));
  });
  add("joiner", [](Renderer&, const CallArguments& arguments) {
    Parameters p("joiner()", arguments, {"sep"});
    return Value::object(std::make_shared<Joiner>(to_str(p.get_or(0, Value::string(", ")))));
  });
  add("raise_exception", [](Renderer&, const CallArguments& arguments) -> Value {
    Parameters p("raise_exception()", arguments, {"message"});
    throw RaisedException(to_str(p.get_or(0, Value::string(""))));
  });
  add("strftime_now", [](Renderer& renderer, const CallArguments& arguments) {
    Parameters p("strftime_now()", arguments, {"format"});
    const Value* format = p.get(0);
    if (format == nullptr || !format->is_string()) fail("strftime_now() argument must be str");
    return Value::string(python_strftime(format->as_string(), renderer.local_time()));
  });
  return globals;
}

}  // namespace

const Value* find_global(std::string_view name) {
  static const std::unordered_map<std::string, Value> globals = make_globals();
  const auto found = globals.find(std::string(name));
  return found == globals.end() ? nullptr : &found->second;
}

}  // namespace lpx::core::jinja
