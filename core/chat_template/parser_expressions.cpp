// Expressions, with Jinja2's precedence (lowest first): `x if c else y`, or, and, not,
// comparisons and `in`, + -, ~, * / // %, **, unary - +, then postfix access, filters and tests.
// Note that Jinja binds unary minus tighter than ** and evaluates ** left to right.
#include <algorithm>

#include "chat_template/filters.hpp"
#include "chat_template/limits.hpp"
#include "chat_template/parser.hpp"
#include "chat_template/predicates.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {
// --- expressions ------------------------------------------------------------------------------

ExpressionPtr Parser::parse_expression(bool with_conditional) {
  DepthGuard guard(*this);
  ExpressionPtr node = parse_or();
  if (!with_conditional) return node;
  while (at_name("if")) {
    const int line = advance().line;
    ExpressionPtr condition = parse_or();
    ExpressionPtr otherwise;
    if (skip_name("else")) otherwise = parse_expression(true);
    node = std::make_unique<ConditionalExpression>(line, std::move(node), std::move(condition),
                                                   std::move(otherwise));
  }
  return node;
}

ExpressionPtr Parser::parse_or() {
  ExpressionPtr node = parse_and();
  while (at_name("or")) {
    const int line = advance().line;
    node = std::make_unique<BinaryExpression>(line, BinaryOp::kOr, std::move(node), parse_and());
  }
  return node;
}

ExpressionPtr Parser::parse_and() {
  ExpressionPtr node = parse_not();
  while (at_name("and")) {
    const int line = advance().line;
    node = std::make_unique<BinaryExpression>(line, BinaryOp::kAnd, std::move(node), parse_not());
  }
  return node;
}

ExpressionPtr Parser::parse_not() {
  if (at_name("not")) {
    DepthGuard guard(*this);
    const int line = advance().line;
    return std::make_unique<UnaryExpression>(line, UnaryOp::kNot, parse_not());
  }
  return parse_compare();
}

ExpressionPtr Parser::parse_compare() {
  const int line = current().line;
  ExpressionPtr first = parse_additive();
  std::vector<std::pair<ChainOp, ExpressionPtr>> rest;
  static constexpr std::pair<std::string_view, ChainOp> kOperators[] = {
      {"==", ChainOp::kEqual},     {"!=", ChainOp::kNotEqual}, {"<", ChainOp::kLess},
      {"<=", ChainOp::kLessEqual}, {">", ChainOp::kGreater},   {">=", ChainOp::kGreaterEqual}};
  while (true) {
    std::optional<ChainOp> op;
    for (const auto& [spelling, chain_op] : kOperators) {
      if (at_operator(spelling)) op = chain_op;
    }
    if (op) {
      advance();
    } else if (at_name("in")) {
      advance();
      op = ChainOp::kIn;
    } else if (at_name("not") && peek().type == TokenType::kName && peek().text == "in") {
      advance();
      advance();
      op = ChainOp::kNotIn;
    } else {
      break;
    }
    rest.emplace_back(*op, parse_additive());
  }
  if (rest.empty()) return first;
  auto node = std::make_unique<CompareExpression>(line, std::move(first));
  node->rest = std::move(rest);
  return node;
}

ExpressionPtr Parser::parse_additive() {
  ExpressionPtr node = parse_concat();
  while (at_operator("+") || at_operator("-")) {
    const Token& token = advance();
    const BinaryOp op = token.text == "+" ? BinaryOp::kAdd : BinaryOp::kSubtract;
    node = std::make_unique<BinaryExpression>(token.line, op, std::move(node), parse_concat());
  }
  return node;
}

ExpressionPtr Parser::parse_concat() {
  ExpressionPtr node = parse_multiplicative();
  while (at_operator("~")) {
    const int line = advance().line;
    node = std::make_unique<BinaryExpression>(line, BinaryOp::kConcat, std::move(node),
                                              parse_multiplicative());
  }
  return node;
}

ExpressionPtr Parser::parse_multiplicative() {
  ExpressionPtr node = parse_power();
  static constexpr std::pair<std::string_view, BinaryOp> kOperators[] = {
      {"*", BinaryOp::kMultiply},
      {"/", BinaryOp::kDivide},
      {"//", BinaryOp::kFloorDivide},
      {"%", BinaryOp::kModulo}};
  while (true) {
    std::optional<BinaryOp> op;
    for (const auto& [spelling, binary_op] : kOperators) {
      if (at_operator(spelling)) op = binary_op;
    }
    if (!op) return node;
    const int line = advance().line;
    node = std::make_unique<BinaryExpression>(line, *op, std::move(node), parse_power());
  }
}

ExpressionPtr Parser::parse_power() {
  ExpressionPtr node = parse_unary(true);
  while (at_operator("**")) {
    const int line = advance().line;
    node = std::make_unique<BinaryExpression>(line, BinaryOp::kPower, std::move(node),
                                              parse_unary(true));
  }
  return node;
}

ExpressionPtr Parser::parse_unary(bool with_filter) {
  DepthGuard guard(*this);
  ExpressionPtr node;
  if (at_operator("-") || at_operator("+")) {
    const Token& token = advance();
    const UnaryOp op = token.text == "-" ? UnaryOp::kNegate : UnaryOp::kPlus;
    node = std::make_unique<UnaryExpression>(token.line, op, parse_unary(false));
  } else {
    node = parse_primary();
  }
  node = parse_postfix(std::move(node));
  if (with_filter) node = parse_filter_or_test(std::move(node));
  return node;
}

ExpressionPtr Parser::parse_primary() {
  DepthGuard guard(*this);
  const Token& token = current();
  const int line = token.line;
  switch (token.type) {
    case TokenType::kName: {
      advance();
      if (token.text == "true" || token.text == "True")
        return std::make_unique<LiteralExpression>(line, Value::boolean(true));
      if (token.text == "false" || token.text == "False")
        return std::make_unique<LiteralExpression>(line, Value::boolean(false));
      if (token.text == "none" || token.text == "None")
        return std::make_unique<LiteralExpression>(line, Value::none());
      return std::make_unique<NameExpression>(line, token.text);
    }
    case TokenType::kString: {
      std::string text;
      while (current().type == TokenType::kString) text += advance().text;  // 'a' 'b' == 'ab'
      return std::make_unique<LiteralExpression>(line, Value::string(std::move(text)));
    }
    case TokenType::kInteger:
      advance();
      return std::make_unique<LiteralExpression>(line, Value::integer(token.integer));
    case TokenType::kFloat:
      advance();
      return std::make_unique<LiteralExpression>(line, Value::number(token.real));
    case TokenType::kOperator:
      if (token.text == "(") {
        advance();
        ExpressionPtr node = parse_tuple(true, {}, true);
        expect_operator(")");
        return node;
      }
      if (token.text == "[") return parse_list_literal();
      if (token.text == "{") return parse_dict_literal();
      break;
    default: break;
  }
  unexpected("an expression");
}

bool Parser::at_tuple_end(std::initializer_list<std::string_view> extra_end_names) const {
  const TokenType type = current().type;
  if (type == TokenType::kVariableEnd || type == TokenType::kBlockEnd || type == TokenType::kEnd)
    return true;
  if (at_operator(")")) return true;
  return std::any_of(extra_end_names.begin(), extra_end_names.end(),
                     [&](std::string_view name) { return at_name(name); });
}

ExpressionPtr Parser::parse_tuple(bool with_conditional,
                                  std::initializer_list<std::string_view> extra_end_names,
                                  bool explicit_parentheses) {
  const int line = current().line;
  std::vector<ExpressionPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) expect_operator(",");
    if (at_tuple_end(extra_end_names)) break;
    items.push_back(parse_expression(with_conditional));
    if (at_operator(",")) {
      is_tuple = true;
    } else {
      break;
    }
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items.front());
    if (!explicit_parentheses) unexpected("an expression");
  }
  auto node = std::make_unique<ListExpression>(line, true);
  node->items = std::move(items);
  return node;
}

ExpressionPtr Parser::parse_list_literal() {
  const int line = advance().line;  // '['
  auto node = std::make_unique<ListExpression>(line, false);
  while (!at_operator("]")) {
    if (!node->items.empty()) expect_operator(",");
    if (at_operator("]")) break;
    node->items.push_back(parse_expression());
  }
  expect_operator("]");
  return node;
}

ExpressionPtr Parser::parse_dict_literal() {
  const int line = advance().line;  // '{'
  auto node = std::make_unique<DictExpression>(line);
  while (!at_operator("}")) {
    if (!node->entries.empty()) expect_operator(",");
    if (at_operator("}")) break;
    ExpressionPtr key = parse_expression();
    expect_operator(":");
    node->entries.emplace_back(std::move(key), parse_expression());
  }
  expect_operator("}");
  return node;
}

ExpressionPtr Parser::parse_postfix(ExpressionPtr node) {
  while (true) {
    if (at_operator(".") || at_operator("[")) {
      node = parse_subscript(std::move(node));
    } else if (at_operator("(")) {
      const int line = current().line;
      auto call = std::make_unique<CallExpression>(line, std::move(node));
      call->arguments = parse_call_arguments();
      node = std::move(call);
    } else {
      return node;
    }
  }
}

ExpressionPtr Parser::parse_filter_or_test(ExpressionPtr node) {
  while (true) {
    if (at_operator("|")) {
      node = parse_filters(std::move(node), false);
    } else if (at_name("is")) {
      node = parse_test(std::move(node));
    } else if (at_operator("(")) {
      const int line = current().line;
      auto call = std::make_unique<CallExpression>(line, std::move(node));
      call->arguments = parse_call_arguments();
      node = std::move(call);
    } else {
      return node;
    }
  }
}

ExpressionPtr Parser::parse_subscript(ExpressionPtr node) {
  DepthGuard guard(*this);
  const Token& token = advance();
  if (token.text == ".") {
    const Token& attribute = current();
    if (attribute.type == TokenType::kName) {
      advance();
      return std::make_unique<AttributeExpression>(token.line, std::move(node), attribute.text);
    }
    if (attribute.type == TokenType::kInteger) {  // items.0 is items[0]
      advance();
      return std::make_unique<SubscriptExpression>(
          token.line, std::move(node),
          std::make_unique<LiteralExpression>(token.line, Value::integer(attribute.integer)));
    }
    unexpected("an attribute name or index");
  }
  // '[': an index, a slice, or several comma-separated indexes (a tuple).
  std::vector<SubscriptPart> parts;
  while (!at_operator("]")) {
    if (!parts.empty()) expect_operator(",");
    parts.push_back(parse_subscript_part());
  }
  expect_operator("]");
  if (parts.empty()) fail("expected an index inside '[]'", token.line);
  if (parts.size() == 1) {
    if (parts[0].slice) {
      parts[0].slice->object = std::move(node);
      return std::move(parts[0].slice);
    }
    return std::make_unique<SubscriptExpression>(token.line, std::move(node),
                                                 std::move(parts[0].index));
  }
  auto tuple = std::make_unique<ListExpression>(token.line, true);
  for (SubscriptPart& part : parts) {
    if (part.slice) fail("unsupported construct: a slice inside a tuple index", token.line);
    tuple->items.push_back(std::move(part.index));
  }
  return std::make_unique<SubscriptExpression>(token.line, std::move(node), std::move(tuple));
}

Parser::SubscriptPart Parser::parse_subscript_part() {
  const int line = current().line;
  ExpressionPtr start;
  if (!at_operator(":")) {
    start = parse_expression();
    if (!at_operator(":")) return SubscriptPart{std::move(start), nullptr};
  }
  advance();  // ':'
  auto slice = std::make_unique<SliceExpression>(line, nullptr);
  slice->start = std::move(start);
  if (!at_operator(":") && !at_operator("]") && !at_operator(",")) slice->stop = parse_expression();
  if (skip_operator(":")) {
    if (!at_operator("]") && !at_operator(",")) slice->step = parse_expression();
  }
  return SubscriptPart{nullptr, std::move(slice)};
}

CallSyntax Parser::parse_call_arguments() {
  expect_operator("(");
  CallSyntax call;
  bool first = true;
  while (!at_operator(")")) {
    if (!first) {
      expect_operator(",");
      if (at_operator(")")) break;
    }
    first = false;
    if (at_operator("*") || at_operator("**")) {
      fail(cat("unsupported construct: '", current().text, "' argument unpacking in a call"),
           current().line);
    }
    if (current().type == TokenType::kName && peek().type == TokenType::kOperator &&
        peek().text == "=") {
      std::string name = advance().text;
      advance();  // '='
      call.keyword.emplace_back(std::move(name), parse_expression());
    } else {
      if (!call.keyword.empty())
        fail("positional argument follows keyword argument", current().line);
      call.positional.push_back(parse_expression());
    }
  }
  expect_operator(")");
  return call;
}

ExpressionPtr Parser::parse_filters(ExpressionPtr input, bool start_inline) {
  while (start_inline || at_operator("|")) {
    if (!start_inline) advance();  // '|'
    start_inline = false;
    const Token& name_token = expect_name();
    std::string name = name_token.text;
    while (skip_operator(".")) name += cat(".", expect_name().text);
    const FilterFunction function = find_filter(name);
    if (function == nullptr) {
      fail((is_unsupported_jinja_filter(name) ? "unsupported filter '" : "unknown filter '") +
               name + "'",
           name_token.line);
    }
    auto filter =
        std::make_unique<FilterExpression>(name_token.line, std::move(input), name, function);
    if (at_operator("(")) filter->arguments = parse_call_arguments();
    input = std::move(filter);
  }
  return input;
}

ExpressionPtr Parser::parse_test(ExpressionPtr node) {
  const int line = advance().line;  // 'is'
  const bool negated = skip_name("not");
  const Token& name_token = expect_name();
  std::string name = name_token.text;
  while (skip_operator(".")) name += cat(".", expect_name().text);
  const TestFunction function = find_test(name);
  if (function == nullptr) {
    fail((is_unsupported_jinja_test(name) ? "unsupported test '" : "unknown test '") + name + "'",
         name_token.line);
  }
  auto test = std::make_unique<TestExpression>(line, std::move(node), name, function, negated);
  if (at_operator("(")) {
    test->arguments = parse_call_arguments();
  } else {
    // Jinja accepts one argument without parentheses: `x is divisibleby 3`, `x is sameas none`.
    const TokenType type = current().type;
    const bool starts_argument = type == TokenType::kName || type == TokenType::kString ||
                                 type == TokenType::kInteger || type == TokenType::kFloat ||
                                 at_operator("(") || at_operator("[") || at_operator("{");
    if (starts_argument && !at_name("else") && !at_name("or") && !at_name("and")) {
      if (at_name("is")) fail("cannot chain tests with 'is'", current().line);
      test->arguments.positional.push_back(parse_postfix(parse_primary()));
    }
  }
  return test;
}

}  // namespace lpx::core::jinja
