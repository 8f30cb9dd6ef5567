// Loading the test plugins built by tests/test_plugins.
#pragma once

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

}  // namespace lpx::test
