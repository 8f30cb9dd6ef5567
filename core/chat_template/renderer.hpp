// Executes a parsed template against a context, following Jinja2's scoping rules:
//   * `if` shares its enclosing scope; each `for` iteration (and its `else`), macro call, `with`,
//     block `set`, filter block and `generation` body gets a fresh child scope, so `set` inside
//     them is invisible afterwards (use a namespace to carry values out of a loop);
//   * names resolve through the scope chain, then the context, then the globals; names that
//     Jinja's compiler makes block-local start out undefined (scope_analysis.hpp).
// Budgets (output size, loop iterations, call depth, bytes built) make hostile templates fail
// cleanly.
#pragma once

#include <cstddef>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/json/fwd.hpp>

#include "chat_template/ast.hpp"
#include "chat_template/chat_template.hpp"
#include "chat_template/scope_analysis.hpp"

namespace lpx::core::jinja {

struct Scope {
  explicit Scope(std::shared_ptr<Scope> parent_scope) : parent(std::move(parent_scope)) {}
  const Value* find(const std::string& name) const;

  std::shared_ptr<Scope> parent;
  std::unordered_map<std::string, Value> variables;
};
using ScopePtr = std::shared_ptr<Scope>;

class Renderer {
 public:
  explicit Renderer(const ChatTemplateRenderOptions& options) : options_(options) {}
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;
  ~Renderer();

  // `locals`: analyze_block_locals(body), computed once per template.
  std::string render(const Body& body, const BlockLocals& locals,
                     const boost::json::object& context);

  // Evaluates `expression` the way Jinja does while compiling (constant_folding.hpp): no variables,
  // no calls, forgiving slices. nullopt when it cannot be evaluated that way.
  std::optional<Value> fold(const Expression& expression);
  std::size_t allocated_bytes() const { return allocated_bytes_; }

  // For objects that call back into the renderer (macros, loops, built-in functions).
  Value evaluate(const Expression& expression, const ScopePtr& scope);
  Value call_value(const Value& callee, const CallArguments& arguments);
  std::string call_macro(const MacroStatement& macro, const ScopePtr& definition_scope,
                         const CallArguments& arguments);
  std::string render_loop(const ForStatement& loop, const ScopePtr& scope, const Value& iterable,
                          int depth);
  std::tm local_time() const;  // what strftime_now() formats
  // Mutable objects (namespaces, cyclers) are owned by the renderer until the render ends; see
  // Object::release_contents.
  void track(std::shared_ptr<Object> mutable_object);
  const ScopePtr& root_scope() const { return root_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Flow execute(const Body& body, const ScopePtr& scope, std::string& out);
  // A new scope for `body`, a block with its own scope, with Jinja's undefined-on-entry names.
  ScopePtr enter_block(const Body& body, const ScopePtr& parent) const;
  void declare_block_locals(const Body& body, Scope& scope) const;
  Flow execute(const Statement& statement, const ScopePtr& scope, std::string& out);
  Flow execute_for(const ForStatement& loop, const ScopePtr& scope, const Value& iterable,
                   int depth, std::string& out);
  void execute_set(const SetStatement& set, const ScopePtr& scope);
  void execute_set_block(const SetBlockStatement& set, const ScopePtr& scope);
  void assign(const AssignTarget& target, const Value& value, const ScopePtr& scope);

  Value evaluate_node(const Expression& expression, const ScopePtr& scope);

  Value evaluate_call(const CallExpression& call, const ScopePtr& scope);
  CallArguments evaluate_arguments(const CallSyntax& syntax, const ScopePtr& scope);
  // A filter chain; `block_output` replaces the missing input of `{% filter %}`/`{% set | f %}`.
  Value apply_filters(const Expression& chain, const ScopePtr& scope, const Value& block_output);
  Value lookup(const std::string& name, const ScopePtr& scope) const;

  void append(std::string& out, std::string_view text);
  void count_iteration();
  void count_allocation(std::size_t bytes);
  Value charge(Value computed);  // counts a newly computed value against max_allocated_bytes

  // Bounds the interpreter's recursion (expressions within statements within calls).
  class DepthGuard {
   public:
    DepthGuard(int& counter, int limit, const char* what);
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    ~DepthGuard() { --counter_; }

   private:
    int& counter_;
  };

  const ChatTemplateRenderOptions& options_;
  const BlockLocals* locals_ = nullptr;
  ScopePtr root_;
  std::size_t iterations_ = 0;
  std::size_t allocated_bytes_ = 0;
  int nesting_depth_ = 0;
  int call_depth_ = 0;
  bool folding_ = false;  // evaluating like Jinja's compile-time folding (constant_folding.hpp)
  std::vector<std::shared_ptr<Object>> mutable_objects_;
};

}  // namespace lpx::core::jinja
