// Backend options given on the command line (`--option KEY=VALUE`), shared by the commands
// that pick a backend directly (bench, perplexity).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pipeline/option_schema.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

// Every --option KEY=VALUE of `pairs` into `options` (a later one wins): an integer value is
// an int option, true or false a bool, anything else a string. The first malformed pair is the
// error, and `options` is then left part-filled.
core::Expected<bool> add_backend_options(const std::vector<std::string>& pairs,
                                         std::map<std::string, core::OptionValue>& options);

// Whether `plugin` declares an option called `option` (false when it cannot be loaded).
bool backend_declares(core::PluginRegistry& registry, const std::string& plugin, const std::string& option);

}  // namespace lpx::cli
