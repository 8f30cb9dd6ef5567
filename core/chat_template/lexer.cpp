#include "chat_template/lexer.hpp"

#include <array>
#include <charconv>
#include <optional>

#include "chat_template/str_cat.hpp"
#include "chat_template/template_error.hpp"
#include "chat_template/unicode.hpp"

namespace lpx::core::jinja {
namespace {

// "\r\n" and "\r" become "\n"; then one trailing newline goes (keep_trailing_newline=False).
std::string normalize_newlines(std::string_view source) {
  std::string result;
  result.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      result.push_back('\n');
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      result.push_back(source[i]);
    }
  }
  if (!result.empty() && result.back() == '\n') result.pop_back();
  return result;
}

// Length of the run of Python whitespace starting at `pos`.
std::size_t whitespace_run(std::string_view text, std::size_t pos) {
  std::size_t end = pos;
  while (end < text.size()) {
    std::size_t next = end;
    if (!unicode::is_space(unicode::decode(text, next))) break;
    end = next;
  }
  return end - pos;
}

bool is_all_whitespace(std::string_view text) { return whitespace_run(text, 0) == text.size(); }

std::string_view rstrip_whitespace(std::string_view text) {
  // Walk forward so multi-byte whitespace is recognised; remember where the last non-space ended.
  std::size_t keep = 0;
  for (std::size_t pos = 0; pos < text.size();) {
    if (!unicode::is_space(unicode::decode(text, pos))) keep = pos;
  }
  return text.substr(0, keep);
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }
bool is_decimal(char c) { return c >= '0' && c <= '9'; }

enum class TagKind { kVariable, kBlock, kComment };

class Lexer {
 public:
  explicit Lexer(std::string source) : source_(std::move(source)) {}

  std::vector<Token> run() {
    while (pos_ < source_.size()) {
      const std::size_t tag = find_tag_start(pos_);
      if (tag == std::string::npos) {
        emit_text(source_.substr(pos_), line_);
        advance_to(source_.size());
        break;
      }
      lex_tag(tag);
    }
    tokens_.push_back(Token{TokenType::kEnd, "", 0, 0.0, line_});
    return std::move(tokens_);
  }

 private:
  std::size_t find_tag_start(std::size_t from) const {
    for (std::size_t i = source_.find('{', from); i != std::string::npos;
         i = source_.find('{', i + 1)) {
      if (i + 1 < source_.size() &&
          (source_[i + 1] == '{' || source_[i + 1] == '%' || source_[i + 1] == '#')) {
        return i;
      }
    }
    return std::string::npos;
  }

  void advance_to(std::size_t position) {
    for (std::size_t i = pos_; i < position; ++i) {
      if (source_[i] == '\n') ++line_;
    }
    pos_ = position;
  }

  void emit_text(std::string_view text, int line) {
    if (!text.empty()) tokens_.push_back(Token{TokenType::kText, std::string(text), 0, 0.0, line});
  }

  // The text before a tag, with `-` stripping or lstrip_blocks applied.
  void emit_text_before_tag(std::string_view text, char sign, bool lstrip_applies) {
    if (sign == '-') {
      text = rstrip_whitespace(text);
    } else if (sign != '+' && lstrip_applies) {
      const std::size_t line_start =
          text.rfind('\n') == std::string_view::npos ? 0 : text.rfind('\n') + 1;
      const std::string_view indent = text.substr(line_start);
      if ((line_start > 0 || line_starting_) && !indent.empty() && is_all_whitespace(indent)) {
        text = text.substr(0, line_start);
      }
    }
    emit_text(text, line_);
  }

  // `{% raw %}` (with optional -/+ and -%}) at `tag`: returns the end of the opening tag.
  std::optional<std::size_t> match_raw_begin(std::size_t tag) const {
    std::size_t i = tag + 2;
    if (i < source_.size() && (source_[i] == '-' || source_[i] == '+')) ++i;
    i += whitespace_run(source_, i);
    if (source_.compare(i, 3, "raw") != 0) return std::nullopt;
    i += 3;
    i += whitespace_run(source_, i);
    if (source_.compare(i, 3, "-%}") == 0) return i + 3 + whitespace_run(source_, i + 3);
    if (source_.compare(i, 2, "%}") == 0) return i + 2;
    return std::nullopt;
  }

  void lex_tag(std::size_t tag) {
    const char opener = source_[tag + 1];
    const char sign =
        tag + 2 < source_.size() && (source_[tag + 2] == '-' || source_[tag + 2] == '+')
            ? source_[tag + 2]
            : '\0';
    const TagKind kind =
        opener == '{' ? TagKind::kVariable : (opener == '%' ? TagKind::kBlock : TagKind::kComment);
    const std::string_view text = std::string_view(source_).substr(pos_, tag - pos_);
    emit_text_before_tag(text, sign, kind != TagKind::kVariable);
    advance_to(tag);
    const int tag_line = line_;
    if (kind == TagKind::kBlock) {
      if (const auto raw_end = match_raw_begin(tag)) {
        line_starting_ = source_[*raw_end - 1] == '\n';
        advance_to(*raw_end);
        lex_raw_body(tag_line);
        return;
      }
    }
    line_starting_ = false;
    advance_to(tag + 2 + (sign != '\0' ? 1 : 0));
    if (kind == TagKind::kComment) {
      lex_comment(tag_line);
    } else {
      lex_expression_tag(kind, tag_line);
    }
  }

  // Matches a closing delimiter at `at` ("%}" or "#}"): `+%}` keeps what follows, `-%}` eats all
  // following whitespace, a plain one eats one newline (trim_blocks). Returns the end position.
  std::optional<std::size_t> match_block_close(std::size_t at, std::string_view close,
                                               bool trim) const {
    if ((source_[at] == '+' || source_[at] == '-') &&
        source_.compare(at + 1, close.size(), close) == 0) {
      const std::size_t end = at + 1 + close.size();
      return source_[at] == '-' ? end + whitespace_run(source_, end) : end;
    }
    if (source_.compare(at, close.size(), close) == 0) {
      const std::size_t end = at + close.size();
      return trim && end < source_.size() && source_[end] == '\n' ? end + 1 : end;
    }
    return std::nullopt;
  }

  void finish_tag(std::size_t end) {
    line_starting_ = end > 0 && source_[end - 1] == '\n';
    advance_to(end);
  }

  void lex_comment(int tag_line) {
    for (std::size_t i = pos_; i < source_.size(); ++i) {
      if (const auto end = match_block_close(i, "#}", true)) {
        finish_tag(*end);
        return;
      }
    }
    fail("unterminated comment (missing '#}')", tag_line);
  }

  void lex_raw_body(int tag_line) {
    for (std::size_t i = source_.find("{%", pos_); i != std::string::npos;
         i = source_.find("{%", i + 1)) {
      std::size_t j = i + 2;
      const char sign =
          j < source_.size() && (source_[j] == '-' || source_[j] == '+') ? source_[j] : '\0';
      if (sign != '\0') ++j;
      j += whitespace_run(source_, j);
      if (source_.compare(j, 6, "endraw") != 0) continue;
      j += 6;
      j += whitespace_run(source_, j);
      const auto end = match_block_close(j, "%}", true);
      if (!end) continue;
      emit_text_before_tag(std::string_view(source_).substr(pos_, i - pos_), sign, true);
      finish_tag(*end);
      return;
    }
    fail("unterminated 'raw' block (missing '{% endraw %}')", tag_line);
  }

  // Tokens of a {{ ... }} or {% ... %} tag, up to and including its closing delimiter.
  void lex_expression_tag(TagKind kind, int tag_line) {
    const bool variable = kind == TagKind::kVariable;
    tokens_.push_back(
        Token{variable ? TokenType::kVariableBegin : TokenType::kBlockBegin, "", 0, 0.0, tag_line});
    std::vector<char> open_brackets;
    while (pos_ < source_.size()) {
      if (open_brackets.empty()) {
        std::optional<std::size_t> end;
        if (variable) {
          if (source_.compare(pos_, 3, "-}}") == 0)
            end = pos_ + 3 + whitespace_run(source_, pos_ + 3);
          else if (source_.compare(pos_, 2, "}}") == 0)
            end = pos_ + 2;
        } else {
          end = match_block_close(pos_, "%}", true);
        }
        if (end) {
          tokens_.push_back(
              Token{variable ? TokenType::kVariableEnd : TokenType::kBlockEnd, "", 0, 0.0, line_});
          finish_tag(*end);
          return;
        }
      }
      if (const std::size_t spaces = whitespace_run(source_, pos_); spaces > 0) {
        advance_to(pos_ + spaces);
        continue;
      }
      lex_expression_token(open_brackets);
    }
    fail(std::string("unterminated '") + (variable ? "{{" : "{%") +
             cat("' tag (missing '", (variable ? "}}" : "%}"), "')"),
         tag_line);
  }

  void lex_expression_token(std::vector<char>& open_brackets) {
    const char c = source_[pos_];
    if (is_decimal(c)) {
      lex_number();
    } else if (is_name_start(c)) {
      std::size_t end = pos_;
      while (end < source_.size() && is_name_char(source_[end])) ++end;
      tokens_.push_back(Token{TokenType::kName, source_.substr(pos_, end - pos_), 0, 0.0, line_});
      advance_to(end);
    } else if (c == '\'' || c == '"') {
      lex_string();
    } else {
      lex_operator(open_brackets);
    }
  }

  void lex_operator(std::vector<char>& open_brackets) {
    static constexpr std::array<std::string_view, 26> kOperators{
        "//", "**", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
        "]",  "(",  ")",  "{",  "}",  ">",  "<", "=", ".", ":", "|", ",", ";"};
    for (std::string_view op : kOperators) {
      if (source_.compare(pos_, op.size(), op) != 0) continue;
      if (op == "(" || op == "[" || op == "{") {
        open_brackets.push_back(op == "(" ? ')' : (op == "[" ? ']' : '}'));
      } else if (op == ")" || op == "]" || op == "}") {
        if (open_brackets.empty()) fail(cat("unexpected '", std::string(op), "'"), line_);
        if (open_brackets.back() != op[0]) {
          fail(cat("unexpected '", std::string(op), "', expected '",
                   std::string(1, open_brackets.back()), "'"),
               line_);
        }
        open_brackets.pop_back();
      }
      tokens_.push_back(Token{TokenType::kOperator, std::string(op), 0, 0.0, line_});
      advance_to(pos_ + op.size());
      return;
    }
    std::size_t next = pos_;
    std::string character;
    unicode::append(character, unicode::decode(source_, next));
    fail(cat("unexpected character '", character, "' in tag"), line_);
  }

  // Digits with optional '_' separators, as Python writes numbers; returns the end.
  std::size_t digit_run(std::size_t from, bool (*is_digit)(char)) const {
    std::size_t end = from;
    while (end < source_.size() &&
           (is_digit(source_[end]) || (source_[end] == '_' && end > from &&
                                       end + 1 < source_.size() && is_digit(source_[end + 1])))) {
      ++end;
    }
    return end;
  }

  void lex_number();
  void lex_string();

  std::string source_;
  std::size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;  // the last thing consumed ended a line (for lstrip_blocks)
  std::vector<Token> tokens_;
};

bool is_hex(char c) { return is_decimal(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
bool is_binary(char c) { return c == '0' || c == '1'; }

std::string without_underscores(std::string_view text) {
  std::string result;
  for (char c : text) {
    if (c != '_') result.push_back(c);
  }
  return result;
}

void Lexer::lex_number() {
  const std::size_t start = pos_;
  // 0x / 0o / 0b integers.
  if (source_[start] == '0' && start + 2 < source_.size()) {
    const char prefix = static_cast<char>(source_[start + 1] | 0x20);
    bool (*digit)(char) =
        prefix == 'x' ? is_hex : (prefix == 'o' ? is_octal : (prefix == 'b' ? is_binary : nullptr));
    if (digit != nullptr) {
      std::size_t from = start + 2;
      if (source_[from] == '_') ++from;
      const std::size_t end = digit_run(from, digit);
      if (end > from) {
        const std::string digits =
            without_underscores(std::string_view(source_).substr(from, end - from));
        std::int64_t value = 0;
        const int base = prefix == 'x' ? 16 : (prefix == 'o' ? 8 : 2);
        const auto result =
            std::from_chars(digits.data(), digits.data() + digits.size(), value, base);
        if (result.ec != std::errc()) fail("integer literal too large", line_);
        tokens_.push_back(Token{TokenType::kInteger, "", value, 0.0, line_});
        advance_to(end);
        return;
      }
    }
  }
  std::size_t end = digit_run(start, is_decimal);
  bool is_float = false;
  // A fraction needs digits after the dot, so `foo.0.1` style subscripts stay integers; and a
  // number right after a '.' is never a float (Jinja's lookbehind), e.g. the 1 in `x.1.2`.
  const bool after_dot = start > 0 && source_[start - 1] == '.';
  if (!after_dot && end + 1 < source_.size() && source_[end] == '.' &&
      is_decimal(source_[end + 1])) {
    end = digit_run(end + 1, is_decimal);
    is_float = true;
  }
  if (!after_dot && end < source_.size() && (source_[end] == 'e' || source_[end] == 'E')) {
    std::size_t exponent = end + 1;
    if (exponent < source_.size() && (source_[exponent] == '+' || source_[exponent] == '-'))
      ++exponent;
    if (exponent < source_.size() && is_decimal(source_[exponent])) {
      end = digit_run(exponent, is_decimal);
      is_float = true;
    }
  }
  const std::string digits =
      without_underscores(std::string_view(source_).substr(start, end - start));
  Token token{is_float ? TokenType::kFloat : TokenType::kInteger, "", 0, 0.0, line_};
  if (is_float) {
    std::from_chars(digits.data(), digits.data() + digits.size(), token.real);
  } else {
    if (digits.size() > 1 && digits[0] == '0' &&
        digits.find_first_not_of('0') != std::string::npos) {
      // Python rejects 0123; Jinja lexes "0" then "123", which no grammar rule accepts.
      fail(cat("invalid integer literal '", digits, "'"), line_);
    }
    const auto result =
        std::from_chars(digits.data(), digits.data() + digits.size(), token.integer);
    if (result.ec != std::errc()) fail("integer literal too large", line_);
  }
  tokens_.push_back(std::move(token));
  advance_to(end);
}

// Python's string escapes ("unicode-escape"): unknown escapes such as \d are kept as written.
void Lexer::lex_string() {
  const char quote = source_[pos_];
  const int start_line = line_;
  std::string value;
  std::size_t i = pos_ + 1;
  auto read_hex = [&](std::size_t count) -> char32_t {
    if (i + count > source_.size()) fail("truncated escape in string literal", line_);
    char32_t code = 0;
    for (std::size_t k = 0; k < count; ++k) {
      const char h = source_[i + k];
      if (!is_hex(h)) fail("truncated escape in string literal", line_);
      code = code * 16 + static_cast<char32_t>(is_decimal(h) ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    i += count;
    return code;
  };
  while (true) {
    if (i >= source_.size()) fail("unterminated string literal", start_line);
    const char c = source_[i];
    if (c == quote) break;
    if (c != '\\') {
      value.push_back(c);
      ++i;
      continue;
    }
    if (i + 1 >= source_.size()) fail("unterminated string literal", start_line);
    const char escape = source_[i + 1];
    i += 2;
    switch (escape) {
      case '\n': break;  // line continuation
      case '\\': value.push_back('\\'); break;
      case '\'': value.push_back('\''); break;
      case '"': value.push_back('"'); break;
      case 'a': value.push_back('\a'); break;
      case 'b': value.push_back('\b'); break;
      case 'f': value.push_back('\f'); break;
      case 'n': value.push_back('\n'); break;
      case 'r': value.push_back('\r'); break;
      case 't': value.push_back('\t'); break;
      case 'v': value.push_back('\v'); break;
      case 'x': unicode::append(value, read_hex(2)); break;
      case 'u': unicode::append(value, read_hex(4)); break;
      case 'U': {
        const char32_t code = read_hex(8);
        if (code > 0x10FFFF) fail("illegal Unicode character in string literal", line_);
        unicode::append(value, code);
        break;
      }
      case 'N': fail("\\N{...} escapes are not supported", line_);
      default:
        if (is_octal(escape)) {
          char32_t code = static_cast<char32_t>(escape - '0');
          for (int k = 0; k < 2 && i < source_.size() && is_octal(source_[i]); ++k, ++i) {
            code = code * 8 + static_cast<char32_t>(source_[i] - '0');
          }
          unicode::append(value, code);
        } else {
          value.push_back('\\');
          value.push_back(escape);
        }
    }
  }
  tokens_.push_back(Token{TokenType::kString, std::move(value), 0, 0.0, start_line});
  advance_to(i + 1);
}

}  // namespace

std::vector<Token> tokenize(std::string_view source) {
  return Lexer(normalize_newlines(source)).run();
}

}  // namespace lpx::core::jinja
