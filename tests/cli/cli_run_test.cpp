// `lpx-pipeline run`: the command-line contract (exit codes, messages) on the real binary.
#include <signal.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "plugin_host/plugin_registry.hpp"
#include "support/test_support.hpp"
#include "util/did_you_mean.hpp"

namespace lpx::test {
namespace {

class CliRun : public ::testing::Test {
 protected:
  std::string pipeline(const std::string& name, const std::string& text) {
    const auto path = dir / name;
    write_file(path, text);
    return path.string();
  }
  std::string transport_pipeline(const std::string& extra = "") {
    return pipeline("ok.toml", "[pipeline]\nname = \"cli\"\n\n[transport]\nplugin = "
                               "\"test-transport\"\noutput = \"" +
                                   (dir / "out.txt").string() + "\"\n" + extra);
  }
  // Starts a transport that waits, sends it `signal` once it runs, and returns how the run ended.
  CommandResult stopped_by(int signal);

  TempDir dir;
  const std::string plugins = LPX_TEST_GOOD_PLUGIN_DIR;
};

TEST_F(CliRun, AnUnknownPluginExitsTwoWithFileLineColumn) {
  const std::string bad = pipeline("bad.toml", "[pipeline]\nname = \"bad\"\n\n[transport]\n"
                                               "plugin = \"no-such-plugin\"\n");
  CommandResult r = run_lpx({"run", bad}, plugins);
  EXPECT_EQ(r.exit_code, 2);
  // Every plugin on the path, as a registry over the same folders lists them.
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry({plugins, LPX_BUILTIN_PLUGIN_DIR}, services);
  ASSERT_GE(registry.names().size(), 4u);
  EXPECT_EQ(r.err, bad + ":5:10: error: unknown plugin 'no-such-plugin'; known plugins: " +
                       core::join_or_none(registry.names()) + "\n");
}

TEST_F(CliRun, APluginWithAnAbiProblemIsAConfigurationErrorAtItsLine) {
  const std::string bad = pipeline("abi.toml", "[sampler]\nplugin = \"abi-minor-newer\"\n"
                                               "[transport]\nplugin = \"test-transport\"\n"
                                               "output = \"o\"\n");
  CommandResult r = run_lpx({"run", bad}, std::string(LPX_TEST_BROKEN_PLUGIN_DIR) + ":" + plugins);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind(bad + ":2:10: error: " + LPX_TEST_BROKEN_PLUGIN_DIR +
                            "/lpx-abi-minor-newer.so: plugin needs ABI ",
                        0),
            0u)
      << r.err;
}

TEST_F(CliRun, ListsEveryConfigurationErrorAtOnce) {
  const std::string bad = pipeline("bad.toml", "[sampler]\nplugin = \"greedy\"\ntemperature = 1\n"
                                               "[transport]\nplugin = \"test-transport\"\n"
                                               "output = 5\n");
  CommandResult r = run_lpx({"run", bad}, plugins);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, bad + ":3:1: error: unknown key 'temperature' in [sampler]; known keys: plugin\n" +
                       bad + ":6:10: error: 'transport.output': expected a string, found an integer\n");
}

TEST_F(CliRun, RunsAPipelineWithOverrides) {
  CommandResult r = run_lpx({"run", transport_pipeline("count = 2\n"), "--set",
                             "transport.message=from the command line", "--set",
                             "transport.tags=[\"a\", \"b\"]"},
                            plugins);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string out = read_file(dir / "out.txt");
  EXPECT_NE(out.find("pipeline=cli\n"), std::string::npos) << out;
  EXPECT_NE(out.find("message=from the command line\n"), std::string::npos) << out;
  EXPECT_NE(out.find("count=2\n"), std::string::npos) << out;
  EXPECT_NE(out.find("tags=a,b,\n"), std::string::npos) << out;
}

TEST_F(CliRun, ABadOverrideExitsTwoAndNamesIt) {
  CommandResult r = run_lpx({"run", transport_pipeline(), "--set", "transport.count=-4"}, plugins);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "--set transport.count=-4: error: 'transport.count': -4 is out of range [0, 100]\n");
}

TEST_F(CliRun, ARuntimeFailureExitsOneWithTheMessage) {
  CommandResult r = run_lpx({"run", transport_pipeline("mode = \"fail\"\n")}, plugins);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("error: transport 'test-transport': failing on purpose"), std::string::npos)
      << r.err;
}

TEST_F(CliRun, AMissingPipelineFileExitsTwo) {
  CommandResult r = run_lpx({"run", (dir / "absent.toml").string()}, plugins);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find((dir / "absent.toml").string() + ": error: "), std::string::npos) << r.err;
}

CommandResult CliRun::stopped_by(int signal) {
  ChildProcess child({LPX_PIPELINE_BINARY, "run", transport_pipeline("mode = \"wait\"\n")},
                     {{"LPX_PLUGIN_PATH", plugins}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (read_file(dir / "out.txt").find("waiting") == std::string::npos &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(kill(child.pid(), signal), 0);
  return child.wait(std::chrono::seconds(30));
}

TEST_F(CliRun, SigintStopsARunningTransportCleanly) {
  // As Ctrl-C would.
  CommandResult r = stopped_by(SIGINT);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(dir / "out.txt").find("stopped\n"), std::string::npos);
  EXPECT_NE(r.err.find("SIGINT received: stopping"), std::string::npos) << r.err;
}

// A transport that serves no models has nothing to reload: a hangup (the terminal closed) stops
// it as SIGTERM would, instead of leaving it running.
TEST_F(CliRun, SighupStopsATransportThatDoesNotReload) {
  CommandResult r = stopped_by(SIGHUP);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(read_file(dir / "out.txt").find("stopped\n"), std::string::npos);
  EXPECT_NE(r.err.find("SIGHUP received: stopping"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lpx::test
