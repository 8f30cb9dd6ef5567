// The error type used inside the template engine.
//
// The interpreter is deeply recursive (expressions inside statements inside macro calls), so
// inside the engine an error travels as a C++ exception, which keeps every evaluation step free
// of error plumbing. ChatTemplate::parse and ChatTemplate::render catch it and return it as an
// Expected error: no exception ever leaves the public API.
#pragma once

#include <string>
#include <utility>

namespace lpx::core::jinja {

class TemplateError {
 public:
  // line == 0 means "not known yet": the renderer fills in the line of the expression or
  // statement being evaluated when the error passes through it.
  explicit TemplateError(std::string message, int line = 0)
      : message_(std::move(message)), line_(line) {}

  const std::string& message() const { return message_; }
  int line() const { return line_; }
  void set_line_if_unknown(int line) {
    if (line_ == 0) line_ = line;
  }
  // "template line 3: unknown filter 'foo'" (or just the message when no line is known).
  std::string describe() const {
    if (line_ <= 0) return message_;
    return "template line " + std::to_string(line_) + ": " + message_;
  }

 private:
  std::string message_;
  int line_;
};

// raise_exception(message) from the template: the message is the whole error text, exactly as
// Hugging Face transformers reports it.
class RaisedException {
 public:
  explicit RaisedException(std::string message) : message_(std::move(message)) {}
  const std::string& message() const { return message_; }

 private:
  std::string message_;
};

[[noreturn]] inline void fail(std::string message, int line = 0) {
  throw TemplateError(std::move(message), line);
}

}  // namespace lpx::core::jinja
