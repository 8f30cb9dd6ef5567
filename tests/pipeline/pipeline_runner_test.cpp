#include "pipeline/pipeline_runner.hpp"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lpx::core {
namespace {

class PipelineRunnerTest : public ::testing::Test {
 protected:
  Pipeline load(const std::string& extra) {
    const std::string path = (dir / "p.toml").string();
    test::write_file(path, "[pipeline]\nname = \"runner\"\n[transport]\nplugin = \"test-transport\"\n"
                           "output = \"" + (dir / "out.txt").string() + "\"\n" + extra);
    auto pipeline = load_pipeline(path, {}, registry);
    EXPECT_TRUE(pipeline) << pipeline.error().to_string();
    return *pipeline;
  }
  test::TempDir dir;
  MetricsRegistry metrics;
  HostServices services{metrics};
  PluginRegistry registry{{LPX_TEST_GOOD_PLUGIN_DIR}, services};
};

TEST_F(PipelineRunnerTest, RunsTheTransportWithItsOptions) {
  Pipeline pipeline = load("message = \"hi\"\nids = [3, 4]\n");
  PipelineRunner runner(pipeline, registry);
  ASSERT_TRUE(runner.create_instances());
  auto ran = runner.run();
  ASSERT_TRUE(ran) << ran.error();
  const std::string out = test::read_file(dir / "out.txt");
  EXPECT_NE(out.find("pipeline=runner\n"), std::string::npos) << out;
  EXPECT_NE(out.find("message=hi\n"), std::string::npos) << out;
  EXPECT_NE(out.find("ids=3,4,\n"), std::string::npos) << out;
  EXPECT_NE(metrics.render().find("lpx_test_runs 1\n"), std::string::npos);
}

TEST_F(PipelineRunnerTest, ATransportFailureIsAnErrorWithItsMessage) {
  Pipeline pipeline = load("mode = \"fail\"\n");
  PipelineRunner runner(pipeline, registry);
  ASSERT_TRUE(runner.create_instances());
  auto ran = runner.run();
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.error().message, "transport 'test-transport': failing on purpose (mode = \"fail\")");
}

TEST_F(PipelineRunnerTest, ACreateFailureNamesTheSlot) {
  Pipeline pipeline = load("");
  std::get<std::string>(pipeline.sections[0].options.values["output"]) = "";
  PipelineRunner runner(pipeline, registry);
  auto created = runner.create_instances();
  ASSERT_FALSE(created);
  EXPECT_EQ(created.error().message, "[transport] plugin 'test-transport': output: must not be empty");
}

TEST_F(PipelineRunnerTest, RequestStopEndsARunningTransport) {
  Pipeline pipeline = load("mode = \"wait\"\n");
  PipelineRunner runner(pipeline, registry);
  ASSERT_TRUE(runner.create_instances());
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    runner.request_stop();
  });
  auto ran = runner.run();
  stopper.join();
  ASSERT_TRUE(ran) << ran.error();
  EXPECT_NE(test::read_file(dir / "out.txt").find("stopped\n"), std::string::npos);
}

}  // namespace
}  // namespace lpx::core
