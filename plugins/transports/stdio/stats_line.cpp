#include "stats_line.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace lpx::stdio {
namespace {

constexpr const char* kDot = " \u00b7 ";

std::string one_decimal(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

}  // namespace

std::string stats_line(const GenerationResult& result) {
  const std::uint64_t used = std::uint64_t{result.prompt_tokens} + result.completion_tokens;
  std::string line = "[ttft " + std::to_string(std::llround(result.time_to_first_token_ms)) + " ms";
  line += kDot + one_decimal(result.decode_tokens_per_second) + " tok/s";
  line += kDot + std::to_string(result.completion_tokens) + " tokens";
  line += kDot + std::string("context ") + std::to_string(used) + "/" +
          std::to_string(result.context_size);
  if (result.cached_tokens > 0) line += kDot + std::to_string(result.cached_tokens) + " cached";
  if (result.draft_tokens > 0) {
    line += kDot + std::string("drafts ") + std::to_string(result.accepted_draft_tokens) + "/" +
            std::to_string(result.draft_tokens) + " accepted";
  }
  line += "]\n";
  return line;
}

}  // namespace lpx::stdio
