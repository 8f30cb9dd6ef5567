// The SDK promise: install the SDK, build sdk/examples/ban-tokens out of tree against the installed
// SDK only, and an unmodified lpx-pipeline loads, lists and runs it.
#include <gtest/gtest.h>

#include "plugin_host/plugin_library.hpp"
#include "support/test_support.hpp"

namespace lpx::test {
namespace {

namespace fs = std::filesystem;

// The build happens once, for the first test; its failure fails every test (a fatal failure in
// SetUpTestSuite would only mark them skipped, which CTest counts as a pass).
class OutOfTreePlugin : public ::testing::Test {
 protected:
  static std::string build_example() {
    dir = new TempDir();
    const fs::path prefix = *dir / "sdk";
    const fs::path source = *dir / "src";
    build = new fs::path(*dir / "build");
    // A copy outside the source tree, so nothing but the installed SDK can be reached.
    fs::copy(fs::path(LPX_SOURCE_DIR) / "sdk/examples/ban-tokens", source, fs::copy_options::recursive);

    CommandResult install = run_command({CMAKE_COMMAND_PATH, "--install", LPX_BINARY_DIR, "--prefix",
                                         prefix.string(), "--component", "sdk"});
    if (install.exit_code != 0) return "installing the SDK failed: " + install.out + install.err;
    if (!fs::exists(prefix / "include/lpx/plugin.h") ||
        !fs::exists(prefix / "lib/cmake/LPX/LPXConfig.cmake")) {
      return "the installed SDK lacks lpx/plugin.h or LPXConfig.cmake";
    }
    CommandResult configure =
        run_command({CMAKE_COMMAND_PATH, "-S", source.string(), "-B", build->string(),
                     "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_PREFIX_PATH=" + prefix.string()},
                    {}, std::chrono::minutes(5));
    if (configure.exit_code != 0) return "configuring the example failed: " + configure.out + configure.err;
    CommandResult compile = run_command({CMAKE_COMMAND_PATH, "--build", build->string()}, {},
                                        std::chrono::minutes(5));
    if (compile.exit_code != 0) return "building the example failed: " + compile.out + compile.err;
    return "";
  }
  static void TearDownTestSuite() {
    delete build;
    delete dir;
  }
  void SetUp() override {
    static const std::string failure = build_example();
    ASSERT_EQ(failure, "");
    ASSERT_TRUE(fs::exists(*build / "lpx-ban-tokens.so"));
  }

  static TempDir* dir;
  static fs::path* build;
};
TempDir* OutOfTreePlugin::dir = nullptr;
fs::path* OutOfTreePlugin::build = nullptr;

TEST_F(OutOfTreePlugin, IsListedByAnUnmodifiedHost) {
  CommandResult r = run_lpx({"plugins", "--options"}, build->string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ban-tokens"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find((*build / "lpx-ban-tokens.so").string()), std::string::npos);
  EXPECT_NE(r.out.find("option tokens (a list of integers, required)"), std::string::npos);
  EXPECT_EQ(r.err.find("refused"), std::string::npos) << r.err;
}

TEST_F(OutOfTreePlugin, RunsInAPipelineAndItsValidationReachesTheUser) {
  const fs::path pipeline = *dir / "p.toml";
  const std::string transport = "[transport]\nplugin = \"test-transport\"\noutput = \"" +
                                (*dir / "out.txt").string() + "\"\n";
  const std::string path = build->string() + ":" + LPX_TEST_GOOD_PLUGIN_DIR;
  const std::string choose = "[[sampler]]\nplugin = \"greedy\"\n";
  write_file(pipeline, "[[sampler]]\nplugin = \"ban-tokens\"\ntokens = [1, 2]\n" + choose + transport);
  CommandResult ok = run_lpx({"run", pipeline.string()}, path);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;

  write_file(pipeline, "[[sampler]]\nplugin = \"ban-tokens\"\ntokens = []\n" + choose + transport);
  CommandResult empty = run_lpx({"run", pipeline.string()}, path);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_EQ(empty.err, pipeline.string() + ":3:10: error: [sampler] plugin 'ban-tokens': tokens: "
                                           "list at least one token id to ban\n");
}

TEST_F(OutOfTreePlugin, FiltersCandidatesWhenLoadedByTheHostLibrary) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  auto plugin = core::PluginLibrary::load(*build / "lpx-ban-tokens.so", services, "ban-tokens");
  ASSERT_TRUE(plugin) << plugin.error();
  core::ResolvedOptions options;
  options.specs = plugin.value()->description().options;
  options.values["tokens"] = std::vector<std::int64_t>{7, 3};
  auto instance = plugin.value()->create(options);
  ASSERT_TRUE(instance) << instance.error();
  std::vector<lpx_token_candidate> data = {{1, 0.5f, 0}, {3, 2.0f, 0}, {5, 1.0f, 0}, {7, 3.0f, 0}};
  lpx_candidates candidates{data.data(), data.size(), -1, 0, 0, 0};
  const auto& api = instance.value()->api<lpx_sampler_api>();
  ASSERT_EQ(api.apply(instance.value()->raw(), nullptr, &candidates), nullptr);
  ASSERT_EQ(candidates.size, 2u);
  EXPECT_EQ(candidates.data[0].id, 1);
  EXPECT_EQ(candidates.data[1].id, 5);
}

}  // namespace
}  // namespace lpx::test
