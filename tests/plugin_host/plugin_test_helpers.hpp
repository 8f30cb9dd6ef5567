// Loading the test plugins built by tests/test_plugins.
#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "plugin_host/plugin_library.hpp"

namespace lpx::test {

inline std::string good_plugin(const std::string& name) {
  return std::string(LPX_TEST_GOOD_PLUGIN_DIR) + "/lpx-" + name + ".so";
}
inline std::string broken_plugin(const std::string& name) {
  return std::string(LPX_TEST_BROKEN_PLUGIN_DIR) + "/lpx-" + name + ".so";
}
inline std::string builtin_plugin(const std::string& name) {
  return std::string(LPX_BUILTIN_PLUGIN_DIR) + "/lpx-" + name + ".so";
}

// An instance of built-in plugin `name` with `options` over its defaults; throws
// std::runtime_error with the host's message when loading or creating fails.
inline std::shared_ptr<core::PluginInstance> create_builtin(
    core::HostServices& services, const std::string& name,
    const std::map<std::string, core::OptionValue>& options = {}) {
  auto plugin = core::PluginLibrary::load(builtin_plugin(name), services, name);
  if (!plugin) throw std::runtime_error(plugin.error().message);
  core::ResolvedOptions resolved = core::default_options(plugin.value()->description().options);
  for (const auto& [key, value] : options) resolved.values[key] = value;
  auto created = plugin.value()->create(resolved);
  if (!created) throw std::runtime_error(created.error().message);
  return *created;
}

}  // namespace lpx::test
