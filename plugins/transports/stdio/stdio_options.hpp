// The stdio transport's options: their schema (shown by `lpx-pipeline plugins --options` and
// checked by the host before the pipeline runs) and their values, read once at create.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <lpx/cpp/options.hpp>

namespace lpx::stdio {

enum class InteractiveMode { kAuto, kAlways, kNever };

struct StdioOptions {
  std::string system_prompt;     // empty: no system message
  std::uint32_t max_tokens = 0;  // 0: until end of generation or the context is full
  InteractiveMode interactive = InteractiveMode::kAuto;
  bool stats = false;

  static StdioOptions read(const Options& options);
};

std::span<const lpx_option_spec> stdio_option_schema() noexcept;

}  // namespace lpx::stdio
