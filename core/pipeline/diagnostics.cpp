#include "pipeline/diagnostics.hpp"

#include <algorithm>
#include <tuple>

namespace lpx::core {

std::string SourceLocation::to_string() const {
  if (line == 0) return file;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column);
}

std::string Diagnostic::to_string() const { return where.to_string() + ": error: " + message; }

void Diagnostics::error(SourceLocation where, std::string message) {
  items_.push_back({std::move(where), std::move(message)});
}

void Diagnostics::sort_by_position() {
  std::stable_sort(items_.begin(), items_.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return std::tuple(a.where.line == 0, a.where.file, a.where.line, a.where.column) <
           std::tuple(b.where.line == 0, b.where.file, b.where.line, b.where.column);
  });
}

std::string Diagnostics::to_string() const {
  std::string out;
  for (const Diagnostic& d : items_) out += d.to_string() + "\n";
  return out;
}

}  // namespace lpx::core
