// The parsed template: expression and statement nodes. Nodes are immutable after parsing and
// shared by every render of the template.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "chat_template/arguments.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

struct Expression;
using ExpressionPtr = std::unique_ptr<const Expression>;

struct CallSyntax {
  std::vector<ExpressionPtr> positional;
  std::vector<std::pair<std::string, ExpressionPtr>> keyword;
};

enum class ExpressionKind {
  kLiteral,
  kName,
  kList,
  kDict,
  kAttribute,
  kSubscript,
  kSlice,
  kCall,
  kFilter,
  kTest,
  kUnary,
  kBinary,
  kCompare,
  kConditional,
};

enum class UnaryOp { kNot, kNegate, kPlus };
enum class BinaryOp {
  kAdd,
  kSubtract,
  kMultiply,
  kDivide,
  kFloorDivide,
  kModulo,
  kPower,
  kConcat,
  kAnd,
  kOr
};
// The operators of a comparison chain: Python's comparisons plus Jinja's `in` and `not in`.
enum class ChainOp { kEqual, kNotEqual, kLess, kLessEqual, kGreater, kGreaterEqual, kIn, kNotIn };

struct Expression {
  explicit Expression(ExpressionKind node_kind, int source_line)
      : kind(node_kind), line(source_line) {}
  Expression(const Expression&) = delete;
  Expression& operator=(const Expression&) = delete;
  virtual ~Expression() = default;

  const ExpressionKind kind;
  const int line;
  // The value Jinja computes for this expression while compiling, if it does (see
  // constant_folding.hpp). Set once by fold_constants() right after parsing, before the tree is
  // shared, and read-only after that.
  mutable std::optional<Value> folded;
};

struct LiteralExpression final : Expression {
  LiteralExpression(int l, Value v)
      : Expression(ExpressionKind::kLiteral, l), value(std::move(v)) {}
  Value value;
};

struct NameExpression final : Expression {
  NameExpression(int l, std::string n) : Expression(ExpressionKind::kName, l), name(std::move(n)) {}
  std::string name;
};

struct ListExpression final : Expression {  // [a, b] or (a, b)
  ListExpression(int l, bool t) : Expression(ExpressionKind::kList, l), tuple(t) {}
  std::vector<ExpressionPtr> items;
  bool tuple;
};

struct DictExpression final : Expression {
  explicit DictExpression(int l) : Expression(ExpressionKind::kDict, l) {}
  std::vector<std::pair<ExpressionPtr, ExpressionPtr>> entries;
};

struct AttributeExpression final : Expression {  // object.name
  AttributeExpression(int l, ExpressionPtr o, std::string n)
      : Expression(ExpressionKind::kAttribute, l), object(std::move(o)), name(std::move(n)) {}
  ExpressionPtr object;
  std::string name;
};

struct SubscriptExpression final : Expression {  // object[index]
  SubscriptExpression(int l, ExpressionPtr o, ExpressionPtr i)
      : Expression(ExpressionKind::kSubscript, l), object(std::move(o)), index(std::move(i)) {}
  ExpressionPtr object;
  ExpressionPtr index;
};

struct SliceExpression final : Expression {  // object[start:stop:step], each part optional
  SliceExpression(int l, ExpressionPtr o)
      : Expression(ExpressionKind::kSlice, l), object(std::move(o)) {}
  ExpressionPtr object;
  ExpressionPtr start;
  ExpressionPtr stop;
  ExpressionPtr step;
};

struct CallExpression final : Expression {
  CallExpression(int l, ExpressionPtr c)
      : Expression(ExpressionKind::kCall, l), callee(std::move(c)) {}
  ExpressionPtr callee;
  CallSyntax arguments;
};

struct FilterExpression final : Expression {  // input | name(arguments)
  FilterExpression(int l, ExpressionPtr i, std::string n, FilterFunction f)
      : Expression(ExpressionKind::kFilter, l),
        input(std::move(i)),
        name(std::move(n)),
        function(f) {}
  ExpressionPtr input;  // null in `{% filter %}` and `{% set x | filter %}`: the block's output
  std::string name;
  FilterFunction function;
  CallSyntax arguments;
};

struct TestExpression final : Expression {  // input is [not] name(arguments)
  TestExpression(int l, ExpressionPtr i, std::string n, TestFunction f, bool neg)
      : Expression(ExpressionKind::kTest, l),
        input(std::move(i)),
        name(std::move(n)),
        function(f),
        negated(neg) {}
  ExpressionPtr input;
  std::string name;
  TestFunction function;
  bool negated;
  CallSyntax arguments;
};

struct UnaryExpression final : Expression {
  UnaryExpression(int l, UnaryOp o, ExpressionPtr e)
      : Expression(ExpressionKind::kUnary, l), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExpressionPtr operand;
};

struct BinaryExpression final : Expression {
  BinaryExpression(int l, BinaryOp o, ExpressionPtr a, ExpressionPtr b)
      : Expression(ExpressionKind::kBinary, l), op(o), left(std::move(a)), right(std::move(b)) {}
  BinaryOp op;
  ExpressionPtr left;
  ExpressionPtr right;
};

struct CompareExpression final : Expression {  // a < b <= c chains like Python
  CompareExpression(int l, ExpressionPtr f)
      : Expression(ExpressionKind::kCompare, l), first(std::move(f)) {}
  ExpressionPtr first;
  std::vector<std::pair<ChainOp, ExpressionPtr>> rest;
};

struct ConditionalExpression final : Expression {  // then if condition else otherwise
  ConditionalExpression(int l, ExpressionPtr t, ExpressionPtr c, ExpressionPtr o)
      : Expression(ExpressionKind::kConditional, l),
        then(std::move(t)),
        condition(std::move(c)),
        otherwise(std::move(o)) {}
  ExpressionPtr then;
  ExpressionPtr condition;
  ExpressionPtr otherwise;  // may be null: undefined when the condition is false
};

// --- statements -------------------------------------------------------------------------------

struct Statement;
using StatementPtr = std::unique_ptr<const Statement>;
using Body = std::vector<StatementPtr>;

enum class StatementKind {
  kText,
  kOutput,
  kIf,
  kFor,
  kSet,
  kSetBlock,
  kMacro,
  kFilterBlock,
  kWith,
  kScope,
  kBreak,
  kContinue
};

struct Statement {
  explicit Statement(StatementKind node_kind, int source_line)
      : kind(node_kind), line(source_line) {}
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  virtual ~Statement() = default;

  const StatementKind kind;
  const int line;
};

struct TextStatement final : Statement {
  TextStatement(int l, std::string t) : Statement(StatementKind::kText, l), text(std::move(t)) {}
  std::string text;
};

struct OutputStatement final : Statement {  // {{ expression }}
  OutputStatement(int l, ExpressionPtr e)
      : Statement(StatementKind::kOutput, l), expression(std::move(e)) {}
  ExpressionPtr expression;
  mutable std::optional<std::string> folded_text;  // printed at compile time, like Jinja
};

struct IfStatement final : Statement {
  explicit IfStatement(int l) : Statement(StatementKind::kIf, l) {}
  std::vector<std::pair<ExpressionPtr, Body>> branches;  // if, then each elif
  Body otherwise;
};

// Where an assignment or loop stores its value: one name, several names (unpacking), or
// `namespace.attribute`.
struct AssignTarget {
  std::vector<std::string> names;
  bool unpack = false;
  std::string attribute;  // non-empty: names[0].attribute
};

struct ForStatement final : Statement {
  explicit ForStatement(int l) : Statement(StatementKind::kFor, l) {}
  AssignTarget target;
  ExpressionPtr iterable;
  ExpressionPtr filter;  // `for x in xs if condition`
  bool recursive = false;
  Body body;
  Body otherwise;  // runs when nothing was iterated
};

struct SetStatement final : Statement {  // {% set target = value %}
  explicit SetStatement(int l) : Statement(StatementKind::kSet, l) {}
  AssignTarget target;
  ExpressionPtr value;
};

struct SetBlockStatement final : Statement {  // {% set name | filters %}body{% endset %}
  explicit SetBlockStatement(int l) : Statement(StatementKind::kSetBlock, l) {}
  AssignTarget target;
  ExpressionPtr filter;  // may be null
  Body body;
};

struct MacroParameter {
  std::string name;
  ExpressionPtr default_value;  // may be null
};

struct MacroStatement final : Statement {
  explicit MacroStatement(int l) : Statement(StatementKind::kMacro, l) {}
  std::string name;
  std::vector<MacroParameter> parameters;
  Body body;
};

struct FilterBlockStatement final : Statement {  // {% filter upper %}body{% endfilter %}
  explicit FilterBlockStatement(int l) : Statement(StatementKind::kFilterBlock, l) {}
  ExpressionPtr filter;
  Body body;
};

struct WithStatement final : Statement {  // {% with a = 1 %}body{% endwith %}
  explicit WithStatement(int l) : Statement(StatementKind::kWith, l) {}
  std::vector<std::pair<AssignTarget, ExpressionPtr>> assignments;
  Body body;
};

// A body with its own variable scope and no other effect: {% generation %} (Hugging Face's
// assistant-mask tag, which renders its body as is).
struct ScopeStatement final : Statement {
  explicit ScopeStatement(int l) : Statement(StatementKind::kScope, l) {}
  Body body;
};

struct LoopControlStatement final : Statement {  // {% break %} / {% continue %}
  LoopControlStatement(int l, StatementKind k) : Statement(k, l) {}
};

}  // namespace lpx::core::jinja
