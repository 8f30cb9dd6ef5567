#include "chat_template/constant_folding.hpp"

#include <cstddef>

#include "chat_template/filters.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/renderer.hpp"
#include "chat_template/value_format.hpp"

namespace lpx::core::jinja {
namespace {

// Folding runs on untrusted templates too: each evaluation gets a small budget, and the folded
// values kept for one template are capped. Past the cap, expressions are simply evaluated at
// render time, which gives the same result except for Jinja's forgiving compile-time slices.
constexpr std::size_t kMaxFoldedBytesPerExpression = std::size_t{1} << 16;
constexpr std::size_t kMaxFoldedBytesPerTemplate = std::size_t{1} << 22;

bool certainly_variable(const Expression& expression);

bool any_variable(const CallSyntax& call) {
  for (const ExpressionPtr& argument : call.positional) {
    if (certainly_variable(*argument)) return true;
  }
  for (const auto& keyword : call.keyword) {
    if (certainly_variable(*keyword.second)) return true;
  }
  return false;
}

// Whether evaluating `expression` always reads a variable or calls something, so it can never
// fold. A shortcut only: folding is attempted whenever this is false.
bool certainly_variable(const Expression& expression) {
  switch (expression.kind) {
    case ExpressionKind::kLiteral: return false;
    case ExpressionKind::kName:
    case ExpressionKind::kCall: return true;
    case ExpressionKind::kList:
      for (const ExpressionPtr& item : static_cast<const ListExpression&>(expression).items) {
        if (certainly_variable(*item)) return true;
      }
      return false;
    case ExpressionKind::kDict:
      for (const auto& [key, value] : static_cast<const DictExpression&>(expression).entries) {
        if (certainly_variable(*key) || certainly_variable(*value)) return true;
      }
      return false;
    case ExpressionKind::kAttribute:
      return certainly_variable(*static_cast<const AttributeExpression&>(expression).object);
    case ExpressionKind::kSubscript: {
      const auto& subscript = static_cast<const SubscriptExpression&>(expression);
      return certainly_variable(*subscript.object) || certainly_variable(*subscript.index);
    }
    case ExpressionKind::kSlice:
      return certainly_variable(*static_cast<const SliceExpression&>(expression).object);
    case ExpressionKind::kFilter: {
      const auto& filter = static_cast<const FilterExpression&>(expression);
      return !filter.input || filter_needs_context(filter.name) ||
             certainly_variable(*filter.input) || any_variable(filter.arguments);
    }
    case ExpressionKind::kTest: {
      const auto& test = static_cast<const TestExpression&>(expression);
      return certainly_variable(*test.input) || any_variable(test.arguments);
    }
    case ExpressionKind::kUnary:
      return certainly_variable(*static_cast<const UnaryExpression&>(expression).operand);
    case ExpressionKind::kBinary: {
      const auto& binary = static_cast<const BinaryExpression&>(expression);
      const bool short_circuits = binary.op == BinaryOp::kAnd || binary.op == BinaryOp::kOr;
      return certainly_variable(*binary.left) ||
             (!short_circuits && certainly_variable(*binary.right));
    }
    case ExpressionKind::kCompare: {
      const auto& comparison = static_cast<const CompareExpression&>(expression);
      return certainly_variable(*comparison.first) ||
             certainly_variable(*comparison.rest.front().second);
    }
    case ExpressionKind::kConditional:
      return certainly_variable(*static_cast<const ConditionalExpression&>(expression).condition);
  }
  return true;
}

class Folder {
 public:
  void fold_body(const Body& body) {
    for (const StatementPtr& statement : body) fold_statement(*statement);
  }

 private:
  std::optional<Value> evaluate(const Expression& expression, bool accept_any_value) {
    if (stored_bytes_ >= kMaxFoldedBytesPerTemplate || certainly_variable(expression)) {
      return std::nullopt;
    }
    ChatTemplateRenderOptions options;
    options.max_allocated_bytes = kMaxFoldedBytesPerExpression;
    options.max_output_bytes = kMaxFoldedBytesPerExpression;
    Renderer renderer(options);
    std::optional<Value> value = renderer.fold(expression);
    if (!value || (!accept_any_value && !can_fold_to(*value))) return std::nullopt;
    stored_bytes_ += renderer.allocated_bytes();
    return value;
  }

  // Bottom-up, like Jinja's optimizer: children first, then the node itself.
  void fold(const ExpressionPtr& expression) {
    if (!expression) return;
    fold_children(*expression);
    if (expression->kind == ExpressionKind::kLiteral || expression->kind == ExpressionKind::kName ||
        expression->kind == ExpressionKind::kCall) {
      return;  // already a value, or never constant
    }
    expression->folded = evaluate(*expression, false);
  }

  void fold_call(const CallSyntax& call) {
    for (const ExpressionPtr& argument : call.positional) fold(argument);
    for (const auto& keyword : call.keyword) fold(keyword.second);
  }

  void fold_children(const Expression& expression) {
    switch (expression.kind) {
      case ExpressionKind::kLiteral:
      case ExpressionKind::kName: return;
      case ExpressionKind::kList:
        for (const ExpressionPtr& item : static_cast<const ListExpression&>(expression).items) {
          fold(item);
        }
        return;
      case ExpressionKind::kDict:
        for (const auto& [key, value] : static_cast<const DictExpression&>(expression).entries) {
          fold(key);
          fold(value);
        }
        return;
      case ExpressionKind::kAttribute:
        fold(static_cast<const AttributeExpression&>(expression).object);
        return;
      case ExpressionKind::kSubscript: {
        const auto& subscript = static_cast<const SubscriptExpression&>(expression);
        fold(subscript.object);
        fold(subscript.index);
        return;
      }
      case ExpressionKind::kSlice: {
        const auto& slice = static_cast<const SliceExpression&>(expression);
        fold(slice.object);
        fold(slice.start);
        fold(slice.stop);
        fold(slice.step);
        return;
      }
      case ExpressionKind::kCall: {
        const auto& call = static_cast<const CallExpression&>(expression);
        fold(call.callee);
        fold_call(call.arguments);
        return;
      }
      case ExpressionKind::kFilter: {
        const auto& filter = static_cast<const FilterExpression&>(expression);
        fold(filter.input);
        fold_call(filter.arguments);
        return;
      }
      case ExpressionKind::kTest: {
        const auto& test = static_cast<const TestExpression&>(expression);
        fold(test.input);
        fold_call(test.arguments);
        return;
      }
      case ExpressionKind::kUnary:
        fold(static_cast<const UnaryExpression&>(expression).operand);
        return;
      case ExpressionKind::kBinary: {
        const auto& binary = static_cast<const BinaryExpression&>(expression);
        fold(binary.left);
        fold(binary.right);
        return;
      }
      case ExpressionKind::kCompare: {
        const auto& comparison = static_cast<const CompareExpression&>(expression);
        fold(comparison.first);
        for (const auto& operand : comparison.rest) fold(operand.second);
        return;
      }
      case ExpressionKind::kConditional: {
        const auto& conditional = static_cast<const ConditionalExpression&>(expression);
        fold(conditional.then);
        fold(conditional.condition);
        fold(conditional.otherwise);
        return;
      }
    }
  }

  void fold_statement(const Statement& statement) {
    switch (statement.kind) {
      case StatementKind::kOutput: {
        const auto& output = static_cast<const OutputStatement&>(statement);
        fold(output.expression);
        // A constant {{ }} is printed while compiling, whatever its value.
        if (output.expression->kind != ExpressionKind::kName &&
            output.expression->kind != ExpressionKind::kCall) {
          if (const auto value = evaluate(*output.expression, true)) {
            output.folded_text = to_text(*value);
          }
        }
        return;
      }
      case StatementKind::kIf: {
        const auto& branch_statement = static_cast<const IfStatement&>(statement);
        for (const auto& [condition, body] : branch_statement.branches) {
          fold(condition);
          fold_body(body);
        }
        fold_body(branch_statement.otherwise);
        return;
      }
      case StatementKind::kFor: {
        const auto& loop = static_cast<const ForStatement&>(statement);
        fold(loop.iterable);
        fold(loop.filter);
        fold_body(loop.body);
        fold_body(loop.otherwise);
        return;
      }
      case StatementKind::kSet: fold(static_cast<const SetStatement&>(statement).value); return;
      case StatementKind::kSetBlock: {
        const auto& set = static_cast<const SetBlockStatement&>(statement);
        fold_body(set.body);
        return;
      }
      case StatementKind::kMacro: {
        const auto& macro = static_cast<const MacroStatement&>(statement);
        for (const MacroParameter& parameter : macro.parameters) fold(parameter.default_value);
        fold_body(macro.body);
        return;
      }
      case StatementKind::kFilterBlock:
        fold_body(static_cast<const FilterBlockStatement&>(statement).body);
        return;
      case StatementKind::kWith: {
        const auto& with = static_cast<const WithStatement&>(statement);
        for (const auto& assignment : with.assignments) fold(assignment.second);
        fold_body(with.body);
        return;
      }
      case StatementKind::kScope:
        fold_body(static_cast<const ScopeStatement&>(statement).body);
        return;
      case StatementKind::kText:
      case StatementKind::kBreak:
      case StatementKind::kContinue: return;
    }
  }

  static std::string to_text(const Value& value) { return to_str(value); }

  std::size_t stored_bytes_ = 0;
};

}  // namespace

void fold_constants(const Body& body) { Folder().fold_body(body); }

bool can_fold_to(const Value& value, int depth) {
  require_value_depth(depth);
  switch (value.kind()) {
    case Value::Kind::kNone:
    case Value::Kind::kBool:
    case Value::Kind::kInt:
    case Value::Kind::kFloat:
    case Value::Kind::kString: return true;
    case Value::Kind::kList:
      if (!value.is_list()) return false;  // generators and dict views
      for (const Value& item : value.as_list()) {
        if (!can_fold_to(item, depth + 1)) return false;
      }
      return true;
    case Value::Kind::kDict:
      for (const auto& [key, item] : value.as_dict().entries()) {
        if (!can_fold_to(key, depth + 1) || !can_fold_to(item, depth + 1)) return false;
      }
      return true;
    default: return false;  // undefined values and objects
  }
}

}  // namespace lpx::core::jinja
