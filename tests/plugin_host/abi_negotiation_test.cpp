// ABI negotiation with real plugin libraries built with the production export settings.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core {
namespace {

using test::broken_plugin;
using test::good_plugin;

class AbiNegotiation : public ::testing::Test {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
};

std::string version(unsigned major, unsigned minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

TEST_F(AbiNegotiation, RefusesADifferentMajorNamingBothVersions) {
  auto plugin = PluginLibrary::load(broken_plugin("abi-major-newer"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().find("plugin ABI " + version(LPX_ABI_MAJOR + 1, LPX_ABI_MINOR) +
                                " is incompatible with host ABI " +
                                version(LPX_ABI_MAJOR, LPX_ABI_MINOR)),
            std::string::npos)
      << plugin.error();
  EXPECT_EQ(plugin.error().rfind(broken_plugin("abi-major-newer"), 0), 0u) << "starts with the path";
}

TEST_F(AbiNegotiation, RefusesANewerMinorNamingBothVersions) {
  auto plugin = PluginLibrary::load(broken_plugin("abi-minor-newer"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().find("plugin needs ABI " + version(LPX_ABI_MAJOR, LPX_ABI_MINOR + 1) +
                                " but this host provides " +
                                version(LPX_ABI_MAJOR, LPX_ABI_MINOR)),
            std::string::npos)
      << plugin.error();
}

TEST_F(AbiNegotiation, AcceptsAnOlderMinorAndNeverCallsNewerEntries) {
  static_assert(LPX_ABI_MINOR >= 1, "the test plugin is a 1.0 plugin; the host must be newer");
  auto plugin = PluginLibrary::load(good_plugin("abi-minor-older"), services);
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_EQ(plugin.value()->description().abi_minor, 0u);
  // The plugin's memory holds an aborting validate_options right after its 1.0 descriptor.
  // Validation must not call it: this process would abort.
  ResolvedOptions options;
  auto valid = plugin.value()->validate_options(options);
  EXPECT_TRUE(valid);
  auto instance = plugin.value()->create(options);
  ASSERT_TRUE(instance) << instance.error();
}

TEST_F(AbiNegotiation, RefusesADescriptorTooSmallForItsMinor) {
  auto plugin = PluginLibrary::load(broken_plugin("short-descriptor"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().find("descriptor is"), std::string::npos) << plugin.error();
  EXPECT_NE(plugin.error().find("needs at least"), std::string::npos);
}

TEST_F(AbiNegotiation, PluginsExportOnlyTheEntryPoint) {
  void* handle = dlopen(good_plugin("test-transport").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(handle, nullptr) << dlerror();
  EXPECT_NE(dlsym(handle, "lpx_plugin_entry"), nullptr);
  // The C++ wrapper's trampolines and the plugin's classes stay private.
  EXPECT_EQ(dlsym(handle, "_ZN3lpx6detail4initEPK12lpx_host_apiPP16lpx_plugin_state"), nullptr);
  dlclose(handle);
}

}  // namespace
}  // namespace lpx::core
