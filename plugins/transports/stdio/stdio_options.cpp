#include "stdio_options.hpp"

namespace lpx::stdio {
namespace {

constexpr lpx_option_spec kOptions[] = {
    lpx::option("system_prompt", LPX_OPTION_STRING, "\"\"",
                "System message that starts every conversation; empty = none"),
    lpx::in_range(lpx::option("max_tokens", LPX_OPTION_INT, "0",
                              "Longest answer in tokens; 0 = until the model stops or the "
                              "context is full"),
                  0, 4294967295.0),
    lpx::one_of(lpx::option("interactive", LPX_OPTION_STRING, "\"auto\"",
                            "auto = chat when stdin is a terminal, else answer stdin once; "
                            "always; never"),
                "auto|always|never"),
    lpx::option("stats", LPX_OPTION_BOOL, "false",
                "Print time to first token, tokens/s and context use after each answer "
                "(stderr); also `run --stats`"),
};

}  // namespace

StdioOptions StdioOptions::read(const Options& options) {
  StdioOptions out;
  out.system_prompt = options.get_string("system_prompt");
  out.max_tokens = static_cast<std::uint32_t>(options.get_int("max_tokens"));
  const std::string mode = options.get_string("interactive");
  out.interactive = mode == "always"  ? InteractiveMode::kAlways
                    : mode == "never" ? InteractiveMode::kNever
                                      : InteractiveMode::kAuto;
  out.stats = options.get_bool("stats");
  return out;
}

std::span<const lpx_option_spec> stdio_option_schema() noexcept { return kOptions; }

}  // namespace lpx::stdio
