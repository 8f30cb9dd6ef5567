// ABI negotiation with real plugin libraries built with the production export settings.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include "plugin_host/abi_layout.hpp"
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
  EXPECT_NE(plugin.error().message.find("plugin ABI " + version(LPX_ABI_MAJOR + 1, LPX_ABI_MINOR) +
                                " is incompatible with host ABI " +
                                version(LPX_ABI_MAJOR, LPX_ABI_MINOR)),
            std::string::npos)
      << plugin.error().message;
  EXPECT_EQ(plugin.error().message.rfind(broken_plugin("abi-major-newer"), 0), 0u) << "starts with the path";
  EXPECT_EQ(plugin.error().code, LPX_ERR_UNSUPPORTED);
}

TEST_F(AbiNegotiation, RefusesANewerMinorNamingBothVersions) {
  auto plugin = PluginLibrary::load(broken_plugin("abi-minor-newer"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().message.find("plugin needs ABI " + version(LPX_ABI_MAJOR, LPX_ABI_MINOR + 1) +
                                " but this host provides " +
                                version(LPX_ABI_MAJOR, LPX_ABI_MINOR)),
            std::string::npos)
      << plugin.error();
}

// A plugin may say its structs are larger than its minor defines (built against a later SDK of
// the same minor, or padded): it is accepted, runs, and the bytes past what its minor defines
// (aborting entries here) are never read, let alone called (this process would abort).
TEST_F(AbiNegotiation, AcceptsStructsLargerThanTheirMinorDefines) {
  auto plugin = PluginLibrary::load(good_plugin("oversized-tables"), services);
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_EQ(plugin.value()->description().abi_minor, static_cast<unsigned>(LPX_ABI_MINOR));
  ResolvedOptions options;
  EXPECT_TRUE(plugin.value()->validate_options(options));
  auto instance = plugin.value()->create(options);
  ASSERT_TRUE(instance) << instance.error();
  const auto& api = plugin.value()->api<lpx_sampler_api>();
  EXPECT_EQ(api.struct_size, sizeof(lpx_sampler_api) + sizeof(void*)) << "the plugin's own claim";
  ASSERT_NE(api.apply, nullptr);
  lpx_token_candidate candidates[2] = {{0, 1.0f, 0.0f}, {1, 0.5f, 0.0f}};
  lpx_candidates c{candidates, 2, -1, 0, 0, 0};
  EXPECT_EQ(api.apply(instance.value()->raw(), nullptr, &c), nullptr);
  EXPECT_EQ(c.selected, 0);
}

// A 2.0 sampler in a 2.1 or later host: accepted and run; bind_vocabulary, which 2.0 did not have,
// stays NULL (the plugin keeps an aborting function where 2.1 put it), so the host never calls
// it and binding a vocabulary to the link is a no-op.
TEST_F(AbiNegotiation, AcceptsAnOlderMinorAndNeverCallsWhatItLacks) {
  auto plugin = PluginLibrary::load(good_plugin("abi-minor-older"), services);
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_EQ(plugin.value()->description().abi_minor, 0u);
  ResolvedOptions options;
  auto instance = plugin.value()->create(options);
  ASSERT_TRUE(instance) << instance.error();
  const auto& api = plugin.value()->api<lpx_sampler_api>();
  EXPECT_EQ(api.bind_vocabulary, nullptr);
  ASSERT_NE(api.apply, nullptr);
  lpx_token_candidate candidates[2] = {{0, 1.0f, 0.0f}, {1, 0.5f, 0.0f}};
  lpx_candidates c{candidates, 2, -1, 0, 0, 0};
  EXPECT_EQ(api.apply(instance.value()->raw(), nullptr, &c), nullptr);
  EXPECT_EQ(c.selected, 0);
}

// The copy rule older minors rely on, on a synthetic layout: a 2-entry host table, a plugin of a
// minor that defined 1 entry, however large the plugin says its table is.
TEST(AbiLayout, CopiesOnlyWhatTheMinorDefinesAndTheHostHolds) {
  struct Table {
    std::uint32_t struct_size;
    std::uint64_t first, second;
  };
  const Table plugin{sizeof(Table), 11, 99};
  const std::size_t one_entry = offsetof(Table, second);
  Table host{};
  abi::copy_defined(&plugin, plugin.struct_size, one_entry, &host, sizeof host);
  EXPECT_EQ(host.first, 11u);
  EXPECT_EQ(host.second, 0u) << "an entry the plugin's minor does not define stays NULL";
  Table small_host{};
  abi::copy_defined(&plugin, plugin.struct_size, sizeof(Table) + 64, &small_host, sizeof small_host);
  EXPECT_EQ(small_host.second, 99u) << "never more than the host's struct holds";
  Table short_plugin_host{};
  abi::copy_defined(&plugin, one_entry, sizeof(Table), &short_plugin_host, sizeof short_plugin_host);
  EXPECT_EQ(short_plugin_host.second, 0u) << "never more than the plugin says it has";
  EXPECT_FALSE(abi::layout_for_minor(LPX_ABI_MINOR + 1).has_value());
  EXPECT_EQ(abi::layout_for_minor(7)->quant_backend, offsetof(lpx_quant_backend_api, model_enqueue))
      << "2.8 added the queued steps to the quant-backend table";
  EXPECT_EQ(abi::layout_for_minor(8)->quant_backend, sizeof(lpx_quant_backend_api));
}

TEST_F(AbiNegotiation, RefusesAKindTableTooSmallForItsMinor) {
  auto plugin = PluginLibrary::load(broken_plugin("short-kind-table"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().message.find("its sampler table is " +
                                std::to_string(offsetof(lpx_sampler_api, draw_uniform)) +
                                " bytes, ABI " + version(LPX_ABI_MAJOR, LPX_ABI_MINOR) +
                                " needs at least " + std::to_string(sizeof(lpx_sampler_api))),
            std::string::npos)
      << plugin.error();
}

TEST_F(AbiNegotiation, RefusesA1xPluginSayingToRebuildIt) {
  // Every 1.x plugin is refused by its major: the backend table and the model description
  // changed in 2.0 (see lpx/version.h).
  auto plugin = PluginLibrary::load(broken_plugin("abi-major-older"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().message.find("plugin ABI 1.5 is incompatible with host ABI " +
                                version(LPX_ABI_MAJOR, LPX_ABI_MINOR)),
            std::string::npos)
      << plugin.error().message;
  EXPECT_NE(plugin.error().message.find("rebuild the plugin against LPX SDK " +
                                std::to_string(LPX_ABI_MAJOR) + ".x"),
            std::string::npos)
      << plugin.error();
}

TEST_F(AbiNegotiation, RefusesADescriptorTooSmallForItsMinor) {
  auto plugin = PluginLibrary::load(broken_plugin("short-descriptor"), services);
  ASSERT_FALSE(plugin);
  EXPECT_NE(plugin.error().message.find("descriptor is"), std::string::npos) << plugin.error().message;
  EXPECT_NE(plugin.error().message.find("needs at least"), std::string::npos);
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
