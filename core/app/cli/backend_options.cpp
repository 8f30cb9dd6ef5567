#include "cli/backend_options.hpp"

#include <charconv>
#include <cstdint>
#include <utility>

namespace lpx::cli {

namespace {

core::Expected<std::pair<std::string, core::OptionValue>> parse_backend_option(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return core::invalid_argument("--option wants KEY=VALUE, not '" + text + "'");
  const std::string key = text.substr(0, eq), value = text.substr(eq + 1);
  std::int64_t number = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, number);
  if (!value.empty() && ec == std::errc() && ptr == end) return std::pair{key, core::OptionValue{number}};
  if (value == "true" || value == "false") return std::pair{key, core::OptionValue{value == "true"}};
  return std::pair{key, core::OptionValue{value}};
}

}  // namespace

core::Expected<bool> add_backend_options(const std::vector<std::string>& pairs,
                                         std::map<std::string, core::OptionValue>& options) {
  for (const std::string& pair : pairs) {
    auto parsed = parse_backend_option(pair);
    if (!parsed) return core::unexpected(parsed.error());
    options[parsed->first] = parsed->second;
  }
  return true;
}

bool backend_declares(core::PluginRegistry& registry, const std::string& plugin, const std::string& option) {
  auto library = registry.load(plugin);
  if (!library) return false;
  for (const core::OptionSpec& spec : (*library)->description().options) {
    if (spec.name == option) return true;
  }
  return false;
}

}  // namespace lpx::cli
