// The token stream under the parser, its error messages, and the depth guard.
#include <algorithm>

#include "chat_template/limits.hpp"
#include "chat_template/parser.hpp"
#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {

Parser::DepthGuard::DepthGuard(Parser& parser) : parser_(parser) {
  if (++parser_.depth_ > kMaxParseDepth) {
    --parser_.depth_;
    fail(cat("template nested too deeply (more than ", std::to_string(kMaxParseDepth), " levels)"),
         parser_.current().line);
  }
}

const Token& Parser::peek(std::size_t ahead) const {
  return tokens_[std::min(position_ + ahead, tokens_.size() - 1)];
}

const Token& Parser::advance() {
  const Token& token = tokens_[position_];
  if (position_ + 1 < tokens_.size()) ++position_;
  return token;
}

bool Parser::at_operator(std::string_view op) const {
  return current().type == TokenType::kOperator && current().text == op;
}

bool Parser::at_name(std::string_view name) const {
  return current().type == TokenType::kName && current().text == name;
}

bool Parser::skip_operator(std::string_view op) {
  if (!at_operator(op)) return false;
  advance();
  return true;
}

bool Parser::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  advance();
  return true;
}

void Parser::expect_operator(std::string_view op) {
  if (!skip_operator(op)) unexpected(cat("'", std::string(op), "'"));
}

const Token& Parser::expect_name() {
  if (current().type != TokenType::kName) unexpected("a name");
  return advance();
}

void Parser::expect_block_end() {
  if (current().type != TokenType::kBlockEnd) unexpected("'%}'");
  advance();
}

std::string Parser::describe(const Token& token) {
  switch (token.type) {
    case TokenType::kText: return "template text";
    case TokenType::kVariableBegin: return "'{{'";
    case TokenType::kVariableEnd: return "end of print statement '}}'";
    case TokenType::kBlockBegin: return "'{%'";
    case TokenType::kBlockEnd: return "end of statement block '%}'";
    case TokenType::kName:
    case TokenType::kOperator: return cat("'", token.text, "'");
    case TokenType::kString: return "string literal";
    case TokenType::kInteger:
    case TokenType::kFloat: return "number";
    case TokenType::kEnd: return "end of template";
  }
  return "token";
}

void Parser::unexpected(std::string_view expected) const {
  std::string message = cat("unexpected ", describe(current()));
  if (!expected.empty()) message += cat(", expected ", std::string(expected));
  fail(message, current().line);
}

}  // namespace lpx::core::jinja
