#include "chat_template/renderer.hpp"

#include <algorithm>
#include <chrono>

#include <boost/json/object.hpp>

#include "chat_template/builtins.hpp"
#include "chat_template/constant_folding.hpp"
#include "chat_template/filters.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/methods.hpp"
#include "chat_template/operators.hpp"
#include "chat_template/runtime_objects.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

// Recursion of the interpreter itself (nested expressions and statements across macro calls).
// The parser bounds nesting within the source; this bounds it across calls too. A level takes
// about 600 bytes of stack in a release build, so the limit fits in well under 1 MiB.
constexpr int kMaxNestingDepth = 1000;

// Namespaces and cyclers live until the render ends; templates need a handful.
constexpr std::size_t kMaxMutableObjects = 10000;

}  // namespace

const Value* Scope::find(const std::string& name) const {
  for (const Scope* scope = this; scope != nullptr; scope = scope->parent.get()) {
    const auto found = scope->variables.find(name);
    if (found != scope->variables.end()) return &found->second;
  }
  return nullptr;
}

Renderer::DepthGuard::DepthGuard(int& counter, int limit, const char* what) : counter_(counter) {
  if (++counter_ > limit) {
    --counter_;
    fail(cat(what, " nested too deeply (limit ", std::to_string(limit), ")"));
  }
}

Renderer::~Renderer() {
  // Empty every mutable object first, then drop what they held one value at a time: values
  // reachable through them are destroyed with bounded recursion, and cycles are broken.
  root_.reset();
  ValueList pile;
  for (const auto& object : mutable_objects_) object->release_contents(pile);
  while (!pile.empty()) pile.pop_back();
  mutable_objects_.clear();
}

void Renderer::track(std::shared_ptr<Object> mutable_object) {
  if (mutable_objects_.size() >= kMaxMutableObjects) {
    fail(cat("too many namespaces and cyclers (the limit is ", std::to_string(kMaxMutableObjects),
             ")"));
  }
  mutable_objects_.push_back(std::move(mutable_object));
}

std::string Renderer::render(const Body& body, const BlockLocals& locals,
                             const boost::json::object& context) {
  locals_ = &locals;
  root_ = std::make_shared<Scope>(nullptr);
  for (const auto& member : context) {
    root_->variables[std::string(member.key())] = from_json(member.value());
  }
  declare_block_locals(body, *root_);
  std::string out;
  execute(body, root_, out);
  return out;
}

std::tm Renderer::local_time() const {
  std::tm time{};
  if (!options_.fixed_time) {
    const std::time_t now = std::time(nullptr);
    localtime_r(&now, &time);
    return time;
  }
  using namespace std::chrono;
  const local_seconds moment = *options_.fixed_time;
  const local_days day = floor<days>(moment);
  const year_month_day date{day};
  const hh_mm_ss<seconds> clock{moment - day};
  time.tm_year = static_cast<int>(date.year()) - 1900;
  time.tm_mon = static_cast<int>(static_cast<unsigned>(date.month())) - 1;
  time.tm_mday = static_cast<int>(static_cast<unsigned>(date.day()));
  time.tm_hour = static_cast<int>(clock.hours().count());
  time.tm_min = static_cast<int>(clock.minutes().count());
  time.tm_sec = static_cast<int>(clock.seconds().count());
  time.tm_wday = static_cast<int>(weekday{day}.c_encoding());
  time.tm_yday = static_cast<int>((day - local_days{date.year() / January / 1}).count());
  time.tm_isdst = -1;
  return time;
}

void Renderer::append(std::string& out, std::string_view text) {
  if (out.size() + text.size() > options_.max_output_bytes) {
    fail(cat("template output exceeds the limit of ", std::to_string(options_.max_output_bytes),
             " bytes"));
  }
  count_allocation(text.size());
  out.append(text);
}

void Renderer::count_allocation(std::size_t bytes) {
  allocated_bytes_ += bytes;
  if (allocated_bytes_ > options_.max_allocated_bytes) {
    fail(cat("the template built more than ", std::to_string(options_.max_allocated_bytes),
             " bytes of strings and lists (max_allocated_bytes)"));
  }
}

Value Renderer::charge(Value computed) {
  if (computed.is_string()) {
    count_allocation(computed.as_string().size());
  } else if (computed.is_sequence()) {
    count_allocation(computed.as_list().size() * sizeof(Value));
  } else if (computed.is_dict()) {
    count_allocation(computed.as_dict().size() * 2 * sizeof(Value));
  }
  return computed;
}

void Renderer::count_iteration() {
  if (++iterations_ > options_.max_loop_iterations) {
    fail(cat("too many loop iterations (the limit is ",
             std::to_string(options_.max_loop_iterations), ")"));
  }
}

// --- statements -------------------------------------------------------------------------------

Renderer::Flow Renderer::execute(const Body& body, const ScopePtr& scope, std::string& out) {
  for (const StatementPtr& statement : body) {
    const Flow flow = execute(*statement, scope, out);
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Renderer::Flow Renderer::execute(const Statement& statement, const ScopePtr& scope,
                                 std::string& out) {
  DepthGuard guard(nesting_depth_, kMaxNestingDepth, "statements");
  try {
    switch (statement.kind) {
      case StatementKind::kText:
        append(out, static_cast<const TextStatement&>(statement).text);
        return Flow::kNormal;
      case StatementKind::kOutput: {
        const auto& output = static_cast<const OutputStatement&>(statement);
        if (output.folded_text) {
          append(out, *output.folded_text);
        } else {
          append(out, to_str(evaluate(*output.expression, scope)));
        }
        return Flow::kNormal;
      }
      case StatementKind::kIf: {
        const auto& branch_statement = static_cast<const IfStatement&>(statement);
        for (const auto& [condition, body] : branch_statement.branches) {
          if (evaluate(*condition, scope).truthy()) return execute(body, scope, out);
        }
        return execute(branch_statement.otherwise, scope, out);
      }
      case StatementKind::kFor: {
        const auto& loop = static_cast<const ForStatement&>(statement);
        return execute_for(loop, scope, evaluate(*loop.iterable, scope), 1, out);
      }
      case StatementKind::kSet:
        execute_set(static_cast<const SetStatement&>(statement), scope);
        return Flow::kNormal;
      case StatementKind::kSetBlock:
        execute_set_block(static_cast<const SetBlockStatement&>(statement), scope);
        return Flow::kNormal;
      case StatementKind::kMacro: {
        const auto& macro = static_cast<const MacroStatement&>(statement);
        scope->variables[macro.name] = Value::object(make_macro(macro, scope));
        return Flow::kNormal;
      }
      case StatementKind::kFilterBlock: {
        const auto& block = static_cast<const FilterBlockStatement&>(statement);
        std::string body_output;
        const Flow flow = execute(block.body, enter_block(block.body, scope), body_output);
        append(out,
               to_str(apply_filters(*block.filter, scope, Value::string(std::move(body_output)))));
        return flow;
      }
      case StatementKind::kWith: {
        const auto& with = static_cast<const WithStatement&>(statement);
        const ScopePtr inner = enter_block(with.body, scope);
        for (const auto& [target, value] : with.assignments) {
          assign(target, evaluate(*value, scope), inner);
        }
        return execute(with.body, inner, out);
      }
      case StatementKind::kScope: {
        const Body& body = static_cast<const ScopeStatement&>(statement).body;
        return execute(body, enter_block(body, scope), out);
      }
      case StatementKind::kBreak: return Flow::kBreak;
      case StatementKind::kContinue: return Flow::kContinue;
    }
  } catch (TemplateError& error) {
    error.set_line_if_unknown(statement.line);
    throw;
  }
  return Flow::kNormal;
}

ScopePtr Renderer::enter_block(const Body& body, const ScopePtr& parent) const {
  auto scope = std::make_shared<Scope>(parent);
  declare_block_locals(body, *scope);
  return scope;
}

void Renderer::declare_block_locals(const Body& body, Scope& scope) const {
  const auto found = locals_->find(&body);
  if (found == locals_->end()) return;
  for (const std::string& name : found->second) {
    scope.variables[name] = Value::undefined(cat("'", name, "' is undefined"));
  }
}

Renderer::Flow Renderer::execute_for(const ForStatement& loop, const ScopePtr& scope,
                                     const Value& iterable, int depth, std::string& out) {
  ValueList items = iterate(iterable);
  if (loop.filter) {
    // `for x in xs if cond`: Jinja filters before counting, so loop.length and loop.last see
    // only the kept items.
    ValueList kept;
    for (Value& item : items) {
      count_iteration();
      auto probe = std::make_shared<Scope>(scope);
      assign(loop.target, item, probe);
      if (evaluate(*loop.filter, probe).truthy()) kept.push_back(std::move(item));
    }
    items = std::move(kept);
  }
  if (items.empty()) return execute(loop.otherwise, enter_block(loop.otherwise, scope), out);
  const std::size_t count = items.size();
  const auto context = std::make_shared<LoopContext>(items, depth, loop, scope);
  const Value context_value = Value::object(context);
  for (std::size_t index = 0; index < count; ++index) {
    count_iteration();
    const ScopePtr iteration = enter_block(loop.body, scope);
    assign(loop.target, items[index], iteration);
    iteration->variables["loop"] = context_value;
    context->set_index(index);
    if (execute(loop.body, iteration, out) == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

std::string Renderer::render_loop(const ForStatement& loop, const ScopePtr& scope,
                                  const Value& iterable, int depth) {
  DepthGuard guard(call_depth_, options_.max_call_depth, "recursive loop calls");
  std::string out;
  execute_for(loop, scope, iterable, depth, out);
  return out;
}

void Renderer::execute_set(const SetStatement& set, const ScopePtr& scope) {
  assign(set.target, evaluate(*set.value, scope), scope);
}

void Renderer::execute_set_block(const SetBlockStatement& set, const ScopePtr& scope) {
  std::string body_output;
  execute(set.body, enter_block(set.body, scope), body_output);
  Value value = Value::string(std::move(body_output));
  if (set.filter) value = apply_filters(*set.filter, scope, value);
  assign(set.target, value, scope);
}

void Renderer::assign(const AssignTarget& target, const Value& value, const ScopePtr& scope) {
  if (!target.attribute.empty()) {
    const Value object = lookup(target.names[0], scope);
    if (!object.is_object() || !object.as_object().assign_attribute(target.attribute, value)) {
      fail("cannot assign attribute on non-namespace object");
    }
    return;
  }
  if (!target.unpack) {
    scope->variables[target.names[0]] = value;
    return;
  }
  const ValueList values = unpack(value, target.names.size());
  for (std::size_t i = 0; i < values.size(); ++i) scope->variables[target.names[i]] = values[i];
}

// --- calls ------------------------------------------------------------------------------------

std::string Renderer::call_macro(const MacroStatement& macro, const ScopePtr& definition_scope,
                                 const CallArguments& arguments) {
  DepthGuard guard(call_depth_, options_.max_call_depth, "macro calls");
  const auto& parameters = macro.parameters;
  if (arguments.positional.size() > parameters.size()) {
    fail(cat("macro '", macro.name, "' takes not more than ", std::to_string(parameters.size()),
             " argument(s)"));
  }
  std::vector<const Value*> bound(parameters.size(), nullptr);
  for (std::size_t i = 0; i < arguments.positional.size(); ++i) bound[i] = &arguments.positional[i];
  for (const auto& [name, value] : arguments.keyword) {
    std::size_t index = 0;
    while (index < parameters.size() && parameters[index].name != name) ++index;
    if (index == parameters.size())
      fail(cat("macro '", macro.name, "' takes no keyword argument '", name, "'"));
    if (bound[index] != nullptr)
      fail(cat("macro '", macro.name, "' got multiple values for argument '", name, "'"));
    bound[index] = &value;
  }
  const ScopePtr scope = enter_block(macro.body, definition_scope);
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    if (bound[i] != nullptr) {
      scope->variables[parameters[i].name] = *bound[i];
    } else if (parameters[i].default_value) {
      scope->variables[parameters[i].name] = evaluate(*parameters[i].default_value, scope);
    } else {
      scope->variables[parameters[i].name] =
          Value::undefined(cat("'", parameters[i].name, "' is undefined"));
    }
  }
  std::string out;
  execute(macro.body, scope, out);
  return out;
}

Value Renderer::call_value(const Value& callee, const CallArguments& arguments) {
  if (callee.is_object() && callee.as_object().callable())
    return callee.as_object().call(*this, arguments);
  if (callee.is_undefined()) fail(callee.undefined_message());
  fail(cat("'", callee.type_name(), "' object is not callable"));
}

CallArguments Renderer::evaluate_arguments(const CallSyntax& syntax, const ScopePtr& scope) {
  CallArguments arguments;
  arguments.positional.reserve(syntax.positional.size());
  for (const ExpressionPtr& argument : syntax.positional)
    arguments.positional.push_back(evaluate(*argument, scope));
  for (const auto& [name, argument] : syntax.keyword)
    arguments.keyword.emplace_back(name, evaluate(*argument, scope));
  return arguments;
}

Value Renderer::evaluate_call(const CallExpression& call, const ScopePtr& scope) {
  if (call.callee->kind == ExpressionKind::kAttribute) {
    // obj.method(...) calls the method directly instead of building a bound method first.
    const auto& attribute = static_cast<const AttributeExpression&>(*call.callee);
    const Value object = evaluate(*attribute.object, scope);
    if (!object.is_undefined() && find_method(object, attribute.name) == MethodLookup::kMethod) {
      return call_method(object, attribute.name, evaluate_arguments(call.arguments, scope));
    }
    const Value callee = get_attribute(object, attribute.name);
    return call_value(callee, evaluate_arguments(call.arguments, scope));
  }
  const Value callee = evaluate(*call.callee, scope);
  return call_value(callee, evaluate_arguments(call.arguments, scope));
}

Value Renderer::apply_filters(const Expression& chain, const ScopePtr& scope,
                              const Value& block_output) {
  const auto& filter = static_cast<const FilterExpression&>(chain);
  const Value input =
      filter.input ? apply_filters(*filter.input, scope, block_output) : block_output;
  return charge(filter.function(input, evaluate_arguments(filter.arguments, scope)));
}

Value Renderer::lookup(const std::string& name, const ScopePtr& scope) const {
  if (folding_) fail("not a constant");
  if (const Value* value = scope->find(name)) return *value;
  if (const Value* global = find_global(name)) return *global;
  return Value::undefined(cat("'", name, "' is undefined"));
}

// --- expressions ------------------------------------------------------------------------------

std::optional<Value> Renderer::fold(const Expression& expression) {
  folding_ = true;
  root_ = std::make_shared<Scope>(nullptr);
  static const BlockLocals kNoLocals;
  locals_ = &kNoLocals;
  try {
    return evaluate_node(expression, root_);
  } catch (const TemplateError&) {
    return std::nullopt;  // not constant (a variable or a call), or it fails: evaluate later
  }
}

Value Renderer::evaluate(const Expression& expression, const ScopePtr& scope) {
  DepthGuard guard(nesting_depth_, kMaxNestingDepth, "expressions");
  try {
    if (expression.folded) return *expression.folded;
    return evaluate_node(expression, scope);
  } catch (TemplateError& error) {
    error.set_line_if_unknown(expression.line);
    throw;
  }
}

Value Renderer::evaluate_node(const Expression& expression, const ScopePtr& scope) {
  switch (expression.kind) {
    case ExpressionKind::kLiteral: return static_cast<const LiteralExpression&>(expression).value;
    case ExpressionKind::kName:
      return lookup(static_cast<const NameExpression&>(expression).name, scope);
    case ExpressionKind::kList: {
      const auto& list = static_cast<const ListExpression&>(expression);
      ValueList items;
      items.reserve(list.items.size());
      for (const ExpressionPtr& item : list.items) items.push_back(evaluate(*item, scope));
      return charge(list.tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items)));
    }
    case ExpressionKind::kDict: {
      Dict dict;
      for (const auto& [key, value] : static_cast<const DictExpression&>(expression).entries) {
        Value key_value = evaluate(*key, scope);
        dict.set(std::move(key_value), evaluate(*value, scope));
      }
      return charge(Value::dict(std::move(dict)));
    }
    case ExpressionKind::kAttribute: {
      const auto& attribute = static_cast<const AttributeExpression&>(expression);
      return get_attribute(evaluate(*attribute.object, scope), attribute.name);
    }
    case ExpressionKind::kSubscript: {
      const auto& subscript = static_cast<const SubscriptExpression&>(expression);
      const Value object = evaluate(*subscript.object, scope);
      return get_item(object, evaluate(*subscript.index, scope));
    }
    case ExpressionKind::kSlice: {
      const auto& slice = static_cast<const SliceExpression&>(expression);
      const Value object = evaluate(*slice.object, scope);
      const Value start = slice.start ? evaluate(*slice.start, scope) : Value::none();
      const Value stop = slice.stop ? evaluate(*slice.stop, scope) : Value::none();
      const Value step = slice.step ? evaluate(*slice.step, scope) : Value::none();
      if (folding_ && !object.is_list() && !object.is_string() && !object.is_undefined()) {
        return Value::undefined(cat(object.type_name(), " object has no element slice"));
      }
      return charge(get_slice(object, &start, &stop, &step));
    }
    case ExpressionKind::kCall:
      if (folding_) fail("not a constant");  // Jinja never folds calls
      return charge(evaluate_call(static_cast<const CallExpression&>(expression), scope));
    case ExpressionKind::kFilter: {
      const auto& filter = static_cast<const FilterExpression&>(expression);
      if (folding_ && filter_needs_context(filter.name)) fail("not a constant");
      const Value input = evaluate(*filter.input, scope);
      return charge(filter.function(input, evaluate_arguments(filter.arguments, scope)));
    }
    case ExpressionKind::kTest: {
      const auto& test = static_cast<const TestExpression&>(expression);
      const Value input = evaluate(*test.input, scope);
      const bool result = test.function(input, evaluate_arguments(test.arguments, scope));
      return Value::boolean(result != test.negated);
    }
    case ExpressionKind::kUnary: {
      const auto& unary = static_cast<const UnaryExpression&>(expression);
      return unary_operation(unary.op, evaluate(*unary.operand, scope));
    }
    case ExpressionKind::kBinary: {
      const auto& binary = static_cast<const BinaryExpression&>(expression);
      Value left = evaluate(*binary.left, scope);
      // `and`/`or` short-circuit and return an operand, as in Python.
      if (binary.op == BinaryOp::kAnd) return left.truthy() ? evaluate(*binary.right, scope) : left;
      if (binary.op == BinaryOp::kOr) return left.truthy() ? left : evaluate(*binary.right, scope);
      return charge(binary_operation(binary.op, left, evaluate(*binary.right, scope)));
    }
    case ExpressionKind::kCompare: {
      const auto& comparison = static_cast<const CompareExpression&>(expression);
      Value left = evaluate(*comparison.first, scope);
      for (const auto& [op, operand] : comparison.rest) {
        Value right = evaluate(*operand, scope);
        if (!chain_comparison(op, left, right)) return Value::boolean(false);
        left = std::move(right);
      }
      return Value::boolean(true);
    }
    case ExpressionKind::kConditional: {
      const auto& conditional = static_cast<const ConditionalExpression&>(expression);
      if (evaluate(*conditional.condition, scope).truthy())
        return evaluate(*conditional.then, scope);
      if (conditional.otherwise) return evaluate(*conditional.otherwise, scope);
      return Value::undefined(cat("the inline if-expression on line ",
                                  std::to_string(expression.line),
                                  " evaluated to false and no else section was defined."));
    }
  }
  return Value();
}

}  // namespace lpx::core::jinja
