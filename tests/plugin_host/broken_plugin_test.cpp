// Every way a plugin library can be broken gives a clear error, and the host keeps working.
#include <gtest/gtest.h>

#include "plugin_host/plugin_library.hpp"
#include "plugin_host/plugin_test_helpers.hpp"

namespace lpx::core {
namespace {

using test::broken_plugin;
using test::good_plugin;

struct BrokenCase {
  const char* name;
  const char* expected_message;
};

class BrokenPlugin : public ::testing::TestWithParam<BrokenCase> {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
};

TEST_P(BrokenPlugin, IsRefusedWithAClearMessageAndTheHostGoesOn) {
  const BrokenCase& c = GetParam();
  auto plugin = PluginLibrary::load(broken_plugin(c.name), services, c.name);
  ASSERT_FALSE(plugin);
  EXPECT_EQ(plugin.error().message.rfind(broken_plugin(c.name) + ": ", 0), 0u) << plugin.error().message;
  EXPECT_NE(plugin.error().message.find(c.expected_message), std::string::npos) << plugin.error().message;

  // The host is alive and still loads and uses a good plugin.
  auto good = PluginLibrary::load(good_plugin("oversized-tables"), services);
  ASSERT_TRUE(good) << good.error();
  EXPECT_TRUE(good.value()->create(ResolvedOptions{}));
}

INSTANTIATE_TEST_SUITE_P(
    AllKinds, BrokenPlugin,
    ::testing::Values(
        BrokenCase{"missing-entry", "not an LPX plugin: it does not export 'lpx_plugin_entry'"},
        BrokenCase{"null-descriptor", "lpx_plugin_entry returned NULL"},
        BrokenCase{"init-throws",
                   "init threw a C++ exception across the C ABI (cannot open /dev/nonexistent)"},
        BrokenCase{"init-fails", "init failed: no usable device on this machine"},
        BrokenCase{"wrong-name",
                   "file name promises plugin 'wrong-name' but the plugin calls itself 'another-name'"},
        BrokenCase{"bad-option-default", "option 'top_k' has an invalid default"}),
    [](const auto& param_info) {
      std::string name = param_info.param.name;
      for (char& ch : name) ch = ch == '-' ? '_' : ch;
      return name;
    });

TEST(BrokenPluginFile, MissingOrNotALibraryIsAnError) {
  MetricsRegistry metrics;
  HostServices services{metrics};
  auto missing = PluginLibrary::load("/nonexistent/lpx-x.so", services);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("cannot load"), std::string::npos);
  EXPECT_EQ(missing.error().code, LPX_ERR_NOT_FOUND);
  auto not_elf = PluginLibrary::load(std::string(LPX_SOURCE_DIR) + "/CMakeLists.txt", services);
  ASSERT_FALSE(not_elf);
  EXPECT_NE(not_elf.error().message.find("cannot load"), std::string::npos);
  EXPECT_EQ(not_elf.error().code, LPX_ERR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace lpx::core
