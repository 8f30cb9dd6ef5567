// Statements: text, {{ output }}, and the {% tags %} of the Hugging Face chat-template dialect.
#include <algorithm>
#include <array>

#include "chat_template/constant_folding.hpp"
#include "chat_template/parser.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {
namespace {

// Tags that close or continue a block; met anywhere else they are an error.
constexpr std::array<std::string_view, 10> kBlockContinuations{
    "endfor",   "endif",     "elif",    "else",          "endset",
    "endmacro", "endfilter", "endwith", "endgeneration", "endraw"};

// Jinja2 tags this engine deliberately does not implement.
constexpr std::array<std::string_view, 16> kUnsupportedTags{
    "block",    "endblock",  "extends",    "include",       "import", "from",
    "call",     "endcall",   "autoescape", "endautoescape", "do",     "trans",
    "endtrans", "pluralize", "print",      "debug"};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string quoted_list(std::initializer_list<std::string_view> names) {
  std::string text;
  std::size_t index = 0;
  for (std::string_view name : names) {
    if (index > 0) text += index + 1 == names.size() ? " or " : ", ";
    text += cat("'", std::string(name), "'");
    ++index;
  }
  return text;
}

bool is_reserved_name(std::string_view name) {
  return name == "true" || name == "false" || name == "none" || name == "True" || name == "False" ||
         name == "None";
}

}  // namespace

Body parse_template(std::string_view source) {
  Parser parser(tokenize(source));
  Body body = parser.parse_all();
  fold_constants(body);
  return body;
}

Body Parser::parse_all() { return parse_body({}, "", 0); }

Body Parser::parse_body(std::initializer_list<std::string_view> end_names, std::string_view block,
                        int block_line) {
  DepthGuard guard(*this);
  Body body;
  while (true) {
    const Token& token = current();
    switch (token.type) {
      case TokenType::kText:
        body.push_back(std::make_unique<TextStatement>(token.line, token.text));
        advance();
        break;
      case TokenType::kVariableBegin: {
        const int line = advance().line;
        ExpressionPtr expression = parse_tuple();
        if (current().type != TokenType::kVariableEnd) unexpected("'}}'");
        advance();
        body.push_back(std::make_unique<OutputStatement>(line, std::move(expression)));
        break;
      }
      case TokenType::kBlockBegin: {
        const Token& name = peek();
        if (name.type == TokenType::kName) {
          if (std::find(end_names.begin(), end_names.end(), name.text) != end_names.end()) {
            advance();  // leave the closing tag's name for the caller
            return body;
          }
          if (contains(kBlockContinuations, name.text)) {
            std::string message = cat("unexpected '{% ", name.text, " %}'");
            if (!block.empty()) {
              message += cat(": the '", std::string(block), "' block opened on line ",
                             std::to_string(block_line), " expects ", quoted_list(end_names));
            }
            fail(message, name.line);
          }
        }
        body.push_back(parse_statement());
        break;
      }
      case TokenType::kEnd:
        if (end_names.size() == 0) return body;
        fail(cat("unterminated '", std::string(block), "' block (expected ", quoted_list(end_names),
                 " before the end of the template)"),
             block_line);
      default: unexpected();
    }
  }
}

StatementPtr Parser::parse_statement() {
  advance();  // '{%'
  const Token& token = current();
  if (token.type != TokenType::kName) unexpected("a tag name");
  const std::string& name = token.text;
  const int line = token.line;
  if (name == "for") return parse_for(line);
  if (name == "if") return parse_if(line);
  if (name == "set") return parse_set(line);
  if (name == "macro") return parse_macro(line);
  if (name == "filter") return parse_filter_block(line);
  if (name == "with") return parse_with(line);
  if (name == "generation") return parse_scope_block(line, "endgeneration");
  if (name == "break" || name == "continue") {
    if (loop_depth_ == 0) fail(cat("'", name, "' outside of a loop"), line);
    const StatementKind kind = name == "break" ? StatementKind::kBreak : StatementKind::kContinue;
    advance();
    expect_block_end();
    return std::make_unique<LoopControlStatement>(line, kind);
  }
  if (contains(kUnsupportedTags, name)) fail(cat("unsupported tag '", name, "'"), line);
  fail(cat("unknown tag '", name, "'"), line);
}

std::string Parser::expect_end_tag(std::initializer_list<std::string_view> names,
                                   std::string_view block, int block_line) {
  const Token& token = current();
  if (token.type != TokenType::kName ||
      std::find(names.begin(), names.end(), token.text) == names.end()) {
    fail(cat("expected ", quoted_list(names), " to close the '", std::string(block),
             "' block opened on line ", std::to_string(block_line)),
         token.line);
  }
  std::string name = advance().text;
  expect_block_end();
  return name;
}

AssignTarget Parser::parse_assign_target(bool allow_namespace,
                                         std::initializer_list<std::string_view> extra_end_names) {
  AssignTarget target;
  if (allow_namespace && current().type == TokenType::kName &&
      peek().type == TokenType::kOperator && peek().text == "." &&
      peek(2).type == TokenType::kName) {
    target.names.push_back(advance().text);
    advance();  // '.'
    target.attribute = advance().text;
    return target;
  }
  const bool parenthesized = skip_operator("(");
  while (true) {
    if (!target.names.empty()) {
      if (!skip_operator(",")) break;
      target.unpack = true;
      if (parenthesized ? at_operator(")") : at_tuple_end(extra_end_names)) break;
    }
    const Token& name = expect_name();
    if (is_reserved_name(name.text)) fail(cat("cannot assign to '", name.text, "'"), name.line);
    target.names.push_back(name.text);
  }
  if (parenthesized) expect_operator(")");
  return target;
}

StatementPtr Parser::parse_for(int line) {
  advance();  // 'for'
  auto statement = std::make_unique<ForStatement>(line);
  statement->target = parse_assign_target(false, {"in"});
  if (!skip_name("in")) unexpected("'in'");
  statement->iterable = parse_tuple(false, {"recursive"});
  if (skip_name("if")) statement->filter = parse_expression();
  statement->recursive = skip_name("recursive");
  expect_block_end();
  ++loop_depth_;
  statement->body = parse_body({"endfor", "else"}, "for", line);
  --loop_depth_;
  if (expect_end_tag({"endfor", "else"}, "for", line) == "else") {
    statement->otherwise = parse_body({"endfor"}, "for", line);
    expect_end_tag({"endfor"}, "for", line);
  }
  return statement;
}

StatementPtr Parser::parse_if(int line) {
  advance();  // 'if'
  auto statement = std::make_unique<IfStatement>(line);
  ExpressionPtr condition = parse_tuple(false);
  expect_block_end();
  while (true) {
    Body body = parse_body({"elif", "else", "endif"}, "if", line);
    statement->branches.emplace_back(std::move(condition), std::move(body));
    const std::string name = advance().text;
    if (name == "elif") {
      condition = parse_tuple(false);
      expect_block_end();
      continue;
    }
    expect_block_end();
    if (name == "else") {
      statement->otherwise = parse_body({"endif"}, "if", line);
      expect_end_tag({"endif"}, "if", line);
    }
    return statement;
  }
}

StatementPtr Parser::parse_set(int line) {
  advance();  // 'set'
  AssignTarget target = parse_assign_target(true, {});
  if (skip_operator("=")) {
    auto statement = std::make_unique<SetStatement>(line);
    statement->target = std::move(target);
    statement->value = parse_tuple();
    expect_block_end();
    return statement;
  }
  auto statement = std::make_unique<SetBlockStatement>(line);
  statement->target = std::move(target);
  if (statement->target.unpack) fail("a block 'set' assigns to a single name", line);
  if (at_operator("|")) statement->filter = parse_filters(nullptr, false);
  expect_block_end();
  statement->body = parse_body({"endset"}, "set", line);
  expect_end_tag({"endset"}, "set", line);
  return statement;
}

StatementPtr Parser::parse_macro(int line) {
  advance();  // 'macro'
  auto statement = std::make_unique<MacroStatement>(line);
  statement->name = expect_name().text;
  expect_operator("(");
  while (!at_operator(")")) {
    if (!statement->parameters.empty()) expect_operator(",");
    const Token& name = expect_name();
    if (is_reserved_name(name.text)) fail(cat("cannot assign to '", name.text, "'"), name.line);
    MacroParameter parameter{name.text, nullptr};
    if (skip_operator("=")) {
      parameter.default_value = parse_expression();
    } else if (!statement->parameters.empty() && statement->parameters.back().default_value) {
      fail("non-default argument follows default argument", name.line);
    }
    statement->parameters.push_back(std::move(parameter));
  }
  advance();  // ')'
  expect_block_end();
  const int saved_loop_depth = loop_depth_;
  loop_depth_ = 0;  // a loop around the definition does not make `break` legal inside it
  statement->body = parse_body({"endmacro"}, "macro", line);
  loop_depth_ = saved_loop_depth;
  expect_end_tag({"endmacro"}, "macro", line);
  return statement;
}

StatementPtr Parser::parse_filter_block(int line) {
  advance();  // 'filter'
  auto statement = std::make_unique<FilterBlockStatement>(line);
  statement->filter = parse_filters(nullptr, true);
  expect_block_end();
  statement->body = parse_body({"endfilter"}, "filter", line);
  expect_end_tag({"endfilter"}, "filter", line);
  return statement;
}

StatementPtr Parser::parse_with(int line) {
  advance();  // 'with'
  auto statement = std::make_unique<WithStatement>(line);
  while (current().type != TokenType::kBlockEnd) {
    if (!statement->assignments.empty()) expect_operator(",");
    AssignTarget target = parse_assign_target(false, {});
    expect_operator("=");
    statement->assignments.emplace_back(std::move(target), parse_expression());
  }
  expect_block_end();
  statement->body = parse_body({"endwith"}, "with", line);
  expect_end_tag({"endwith"}, "with", line);
  return statement;
}

StatementPtr Parser::parse_scope_block(int line, std::string_view end_name) {
  const std::string block = advance().text;
  expect_block_end();
  auto statement = std::make_unique<ScopeStatement>(line);
  statement->body = parse_body({end_name}, block, line);
  expect_end_tag({end_name}, block, line);
  return statement;
}

}  // namespace lpx::core::jinja
