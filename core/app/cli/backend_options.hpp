// Backend options given on the command line (`--option KEY=VALUE`), shared by the commands
// that pick a backend directly (bench, perplexity).
#pragma once

#include <string>
#include <utility>

#include "pipeline/option_schema.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

// KEY=VALUE: an integer value is an int option, true or false a bool, anything else a string.
core::Expected<std::pair<std::string, core::OptionValue>> parse_backend_option(const std::string& text);

// Whether `plugin` declares an option called `option` (false when it cannot be loaded).
bool backend_declares(core::PluginRegistry& registry, const std::string& plugin, const std::string& option);

}  // namespace lpx::cli
