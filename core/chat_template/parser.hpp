// Builds the AST from tokens, following Jinja2's grammar and operator precedence. Constructs the
// engine does not implement are parse errors that name the construct and the line, so a
// template either renders like Jinja2 would or is refused up front.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template/ast.hpp"
#include "chat_template/lexer.hpp"

namespace lpx::core::jinja {

// Throws TemplateError.
Body parse_template(std::string_view source);

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : tokens_(std::move(tokens)) {}

  Body parse_all();

  // --- expressions (parser_expressions.cpp) ---
  ExpressionPtr parse_expression(bool with_conditional = true);
  // Comma-separated expressions: one expression, or a tuple when there is a comma.
  ExpressionPtr parse_tuple(bool with_conditional = true,
                            std::initializer_list<std::string_view> extra_end_names = {},
                            bool explicit_parentheses = false);
  // `| name(args) | name2` applied to `input` (null for filter blocks); `start_inline` when the
  // first filter name comes without a leading '|'.
  ExpressionPtr parse_filters(ExpressionPtr input, bool start_inline);
  ExpressionPtr parse_primary();

  // --- statements (parser_statements.cpp) ---
  Body parse_body(std::initializer_list<std::string_view> end_names, std::string_view block,
                  int block_line);
  StatementPtr parse_statement();

 private:
  // token stream
  const Token& current() const { return tokens_[position_]; }
  const Token& peek(std::size_t ahead = 1) const;
  const Token& advance();
  bool at_operator(std::string_view op) const;
  bool at_name(std::string_view name) const;
  bool skip_operator(std::string_view op);
  bool skip_name(std::string_view name);
  void expect_operator(std::string_view op);
  const Token& expect_name();
  void expect_block_end();
  [[noreturn]] void unexpected(std::string_view expected = {}) const;
  static std::string describe(const Token& token);

  // expressions
  ExpressionPtr parse_or();
  ExpressionPtr parse_and();
  ExpressionPtr parse_not();
  ExpressionPtr parse_compare();
  ExpressionPtr parse_additive();
  ExpressionPtr parse_concat();
  ExpressionPtr parse_multiplicative();
  ExpressionPtr parse_power();
  ExpressionPtr parse_unary(bool with_filter);
  ExpressionPtr parse_postfix(ExpressionPtr node);
  ExpressionPtr parse_filter_or_test(ExpressionPtr node);
  ExpressionPtr parse_subscript(ExpressionPtr node);
  // One part of `[...]`: an index, or a slice whose object the caller fills in.
  struct SubscriptPart {
    ExpressionPtr index;
    std::unique_ptr<SliceExpression> slice;
  };
  SubscriptPart parse_subscript_part();
  ExpressionPtr parse_test(ExpressionPtr node);
  ExpressionPtr parse_list_literal();
  ExpressionPtr parse_dict_literal();
  CallSyntax parse_call_arguments();
  bool at_tuple_end(std::initializer_list<std::string_view> extra_end_names) const;

  // statements
  StatementPtr parse_for(int line);
  StatementPtr parse_if(int line);
  StatementPtr parse_set(int line);
  StatementPtr parse_macro(int line);
  StatementPtr parse_filter_block(int line);
  StatementPtr parse_with(int line);
  StatementPtr parse_scope_block(int line, std::string_view end_name);
  AssignTarget parse_assign_target(bool allow_namespace,
                                   std::initializer_list<std::string_view> extra_end_names);
  std::string expect_end_tag(std::initializer_list<std::string_view> names, std::string_view block,
                             int block_line);

  // Guards recursion so a hostile template cannot overflow the stack while being parsed.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& parser);
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    ~DepthGuard() { --parser_.depth_; }

   private:
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  std::size_t position_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // for `break` / `continue` outside a loop
};

}  // namespace lpx::core::jinja
