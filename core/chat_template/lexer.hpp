// Splits template source into text and tag tokens, applying Jinja2's whitespace control as the
// Hugging Face environment configures it: trim_blocks and lstrip_blocks on, `{%-`/`-%}` strip all
// whitespace, `{%+`/`+%}` opt out of lstrip/trim, comments vanish, `{% raw %}` is copied as text,
// newlines are normalised to "\n" and one trailing newline of the source is dropped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::core::jinja {

enum class TokenType {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,
  kInteger,
  kFloat,
  kOperator,
  kEnd,
};

struct Token {
  TokenType type = TokenType::kEnd;
  std::string text;  // text, name, decoded string literal or operator spelling
  std::int64_t integer = 0;
  double real = 0.0;
  int line = 1;
};

// Throws TemplateError (with the line) for unterminated tags, comments and raw blocks, bad
// literals, unbalanced brackets and characters that are not part of the expression language.
std::vector<Token> tokenize(std::string_view source);

}  // namespace lpx::core::jinja
