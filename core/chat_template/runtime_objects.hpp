// The objects a render creates as it runs: macro values and the `loop` variable of for loops.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "chat_template/ast.hpp"
#include "chat_template/renderer.hpp"

namespace lpx::core::jinja {

// A macro value: calling it renders the macro body in a scope whose parent is the scope it was
// defined in (held weakly: scopes hold macros, so a strong pointer would make a cycle).
std::shared_ptr<Object> make_macro(const MacroStatement& statement, const ScopePtr& scope);

// The `loop` variable: index, first/last, previtem/nextitem, cycle(), changed(), and loop(items)
// for recursive loops. One object per loop run; the renderer moves its index along.
class LoopContext final : public Object, public std::enable_shared_from_this<LoopContext> {
 public:
  LoopContext(ValueList items, int depth, const ForStatement& statement, const ScopePtr& scope);

  void set_index(std::size_t index) { index_ = index; }

  std::string type_name() const override { return "LoopContext"; }
  std::string repr() const override;
  std::optional<Value> attribute(std::string_view name) const override;
  bool callable() const override { return true; }
  Value call(Renderer& renderer, const CallArguments& arguments) const override;
  int depth() const override { return value_depth_; }

 private:
  using Method = Value (LoopContext::*)(const CallArguments&);
  Value method(const std::string& name, Method function) const;
  Value cycle(const CallArguments& arguments);
  Value changed(const CallArguments& arguments);

  ValueList items_;
  std::size_t index_ = 0;
  int depth_;            // loop.depth: 1, or more inside recursive loop() calls
  int value_depth_ = 1;  // Object::depth()
  const ForStatement& statement_;
  std::weak_ptr<Scope> scope_;
  std::optional<Value> last_changed_;
};

}  // namespace lpx::core::jinja
