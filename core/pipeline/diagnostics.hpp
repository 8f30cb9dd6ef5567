// Errors found while reading a pipeline, each with the place it came from.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lpx::core {

// Where a value came from: a position in a file, or a command-line override (line 0).
struct SourceLocation {
  std::string file;       // the pipeline path, or "--set KEY=VALUE" for overrides
  std::uint32_t line = 0; // 1-based; 0 when there is no position
  std::uint32_t column = 0;

  // "file:line:column" or, without a position, "file".
  std::string to_string() const;
};

struct Diagnostic {
  SourceLocation where;
  std::string message;

  // "file:line:column: error: message"
  std::string to_string() const;
};

// Collects every error of a validation pass so that all are reported together.
class Diagnostics {
 public:
  void error(SourceLocation where, std::string message);
  // Orders by position in the file (as a reader meets them), command-line overrides last.
  void sort_by_position();
  bool empty() const noexcept { return items_.empty(); }
  const std::vector<Diagnostic>& items() const noexcept { return items_; }
  // One diagnostic per line, in the order found.
  std::string to_string() const;

 private:
  std::vector<Diagnostic> items_;
};

}  // namespace lpx::core
