#include "chat_template/runtime_objects.hpp"

#include <algorithm>

#include "chat_template/builtins.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {
namespace {

class Macro final : public Object {
 public:
  Macro(const MacroStatement& statement, const ScopePtr& scope)
      : statement_(statement), scope_(scope) {}
  std::string type_name() const override { return "Macro"; }
  std::string repr() const override { return cat("<Macro '", statement_.name, "'>"); }
  bool callable() const override { return true; }
  Value call(Renderer& renderer, const CallArguments& arguments) const override {
    ScopePtr scope = scope_.lock();
    if (!scope) scope = renderer.root_scope();
    return Value::string(renderer.call_macro(statement_, scope, arguments));
  }

 private:
  const MacroStatement& statement_;
  std::weak_ptr<Scope> scope_;
};

}  // namespace

LoopContext::LoopContext(ValueList items, int depth, const ForStatement& statement,
                         const ScopePtr& scope)
    : items_(std::move(items)), depth_(depth), statement_(statement), scope_(scope) {
  for (const Value& item : items_) value_depth_ = std::max(value_depth_, item.depth() + 1);
  require_value_depth(value_depth_);
}

std::string LoopContext::repr() const {
  return cat("<LoopContext ", std::to_string(index_ + 1), "/", std::to_string(items_.size()), ">");
}

std::optional<Value> LoopContext::attribute(std::string_view name) const {
  const auto size = static_cast<std::int64_t>(items_.size());
  const auto index = static_cast<std::int64_t>(index_);
  if (name == "index") return Value::integer(index + 1);
  if (name == "index0") return Value::integer(index);
  if (name == "revindex") return Value::integer(size - index);
  if (name == "revindex0") return Value::integer(size - index - 1);
  if (name == "first") return Value::boolean(index == 0);
  if (name == "last") return Value::boolean(index + 1 == size);
  if (name == "length") return Value::integer(size);
  if (name == "depth") return Value::integer(depth_);
  if (name == "depth0") return Value::integer(depth_ - 1);
  if (name == "previtem") {
    return index > 0 ? items_[index_ - 1] : Value::undefined("there is no previous item");
  }
  if (name == "nextitem") {
    return index + 1 < size ? items_[index_ + 1] : Value::undefined("there is no next item");
  }
  if (name == "cycle") return method("cycle", &LoopContext::cycle);
  if (name == "changed") return method("changed", &LoopContext::changed);
  return std::nullopt;
}

Value LoopContext::call(Renderer& renderer, const CallArguments& arguments) const {
  if (!statement_.recursive) fail("cannot call a loop that is not declared 'recursive'");
  if (arguments.positional.size() != 1 || !arguments.keyword.empty()) {
    fail("loop() takes exactly one argument");
  }
  ScopePtr scope = scope_.lock();
  if (!scope) fail("a recursive loop was called after it ended");
  return Value::string(
      renderer.render_loop(statement_, scope, arguments.positional[0], depth_ + 1));
}

// loop.cycle / loop.changed as values: functions bound to this loop.
Value LoopContext::method(const std::string& name, Method function) const {
  auto self = std::const_pointer_cast<LoopContext>(shared_from_this());
  return Value::object(std::make_shared<NativeFunction>(
      name,
      [self, function](Renderer&, const CallArguments& arguments) {
        return ((*self).*function)(arguments);
      },
      value_depth_ + 1));
}

Value LoopContext::cycle(const CallArguments& arguments) {
  if (arguments.positional.empty()) fail("no items for cycling given");
  return arguments.positional[index_ % arguments.positional.size()];
}

Value LoopContext::changed(const CallArguments& arguments) {
  Value current = Value::tuple(arguments.positional);
  if (last_changed_ && equals(*last_changed_, current)) return Value::boolean(false);
  last_changed_ = std::move(current);
  return Value::boolean(true);
}

std::shared_ptr<Object> make_macro(const MacroStatement& statement, const ScopePtr& scope) {
  return std::make_shared<Macro>(statement, scope);
}

}  // namespace lpx::core::jinja
