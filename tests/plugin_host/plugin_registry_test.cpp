#include "plugin_host/plugin_registry.hpp"

#include <dlfcn.h>

#include <gtest/gtest.h>

#include "plugin_host/plugin_test_helpers.hpp"
#include "support/test_support.hpp"

namespace lpx::core {
namespace {

namespace fs = std::filesystem;

class PluginRegistryTest : public ::testing::Test {
 protected:
  MetricsRegistry metrics;
  HostServices services{metrics};
};

bool is_loaded(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // RTLD_NOLOAD took a reference
  return true;
}

TEST_F(PluginRegistryTest, FindsPluginsByFileNameAndIgnoresOtherFiles) {
  test::TempDir dir;
  fs::copy_file(test::good_plugin("test-transport"), dir / "lpx-test-transport.so");
  test::write_file(dir / "libsomething.so", "not a plugin");
  test::write_file(dir / "lpx-.so", "empty name");
  PluginRegistry registry({dir.path()}, services);
  ASSERT_EQ(registry.names(), std::vector<std::string>{"test-transport"});
  auto plugin = registry.load("test-transport");
  ASSERT_TRUE(plugin) << plugin.error();
  EXPECT_EQ(plugin.value()->description().kind, LPX_KIND_TRANSPORT);
  auto again = registry.load("test-transport");
  EXPECT_EQ(plugin.value().get(), again.value().get()) << "loaded once";
}

TEST_F(PluginRegistryTest, ALibraryIsInitialisedOncePerProcess) {
  PluginRegistry first({LPX_TEST_GOOD_PLUGIN_DIR}, services);
  PluginRegistry second({LPX_TEST_GOOD_PLUGIN_DIR}, services);
  auto a = first.load("test-transport");
  auto b = second.load("test-transport");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a.value().get(), b.value().get());
}

TEST_F(PluginRegistryTest, EarlierDirectoriesWinAndLaterOnesAreShadowed) {
  test::TempDir first, second;
  fs::copy_file(test::good_plugin("test-transport"), first / "lpx-test-transport.so");
  fs::copy_file(test::good_plugin("test-transport"), second / "lpx-test-transport.so");
  PluginRegistry registry({first.path(), second.path(), "/nonexistent/dir"}, services);
  ASSERT_EQ(registry.candidates().size(), 1u);
  EXPECT_EQ(registry.candidates()[0].path, first / "lpx-test-transport.so");
  ASSERT_EQ(registry.shadowed().size(), 1u);
  EXPECT_EQ(registry.shadowed()[0].path, second / "lpx-test-transport.so");
}

TEST_F(PluginRegistryTest, UnknownNamesListTheKnownOnesWithASuggestion) {
  PluginRegistry registry({LPX_TEST_GOOD_PLUGIN_DIR}, services);
  auto plugin = registry.load("test-transprot");
  ASSERT_FALSE(plugin);
  EXPECT_EQ(plugin.error().message,
            "unknown plugin 'test-transprot' (did you mean 'test-transport'?); known plugins: "
            "abi-minor-older, oversized-tables, test-device, test-transport");
}

TEST_F(PluginRegistryTest, BrokenLibrariesDoNotStopTheOthers) {
  PluginRegistry registry({LPX_TEST_BROKEN_PLUGIN_DIR, LPX_TEST_GOOD_PLUGIN_DIR}, services);
  size_t loaded = 0, refused = 0;
  for (const PluginCandidate& candidate : registry.candidates()) {
    (registry.load(candidate.name) ? loaded : refused)++;
  }
  EXPECT_EQ(loaded, 4u);  // good/: abi-minor-older, oversized-tables, test-device, test-transport
  EXPECT_EQ(refused, 11u);  // every plugin in broken/
}

TEST_F(PluginRegistryTest, ALibraryStaysLoadedWhileAnInstanceLives) {
  test::TempDir dir;  // a private copy, so no other test holds this file open
  const fs::path path = dir / "lpx-test-transport.so";
  fs::copy_file(test::good_plugin("test-transport"), path);
  test::write_file(dir / "out.txt", "");
  std::shared_ptr<PluginInstance> instance;
  {
    PluginRegistry registry({dir.path()}, services);
    auto plugin = registry.load("test-transport");
    ASSERT_TRUE(plugin);
    ResolvedOptions options;
    options.specs = plugin.value()->description().options;
    for (const OptionSpec& spec : options.specs) {
      if (spec.default_value) options.values.emplace(spec.name, *spec.default_value);
    }
    options.values["output"] = (dir / "out.txt").string();
    auto created = plugin.value()->create(options);
    ASSERT_TRUE(created) << created.error();
    instance = *created;
  }
  EXPECT_TRUE(is_loaded(path.string())) << "registry gone, instance alive: library must stay";
  instance.reset();
  EXPECT_FALSE(is_loaded(path.string())) << "last instance gone: library unloaded";
}

}  // namespace
}  // namespace lpx::core
