// The pipeline files shipped in pipelines/ stay valid: no syntax errors, no unknown keys, no
// wrong types. The only errors allowed are plugins this build does not have yet. chat.toml,
// the README's first command, must load completely and answer.
#include <gtest/gtest.h>

#include <filesystem>

#include "pipeline/pipeline.hpp"
#include "support/test_support.hpp"

namespace lpx::core {
namespace {

class ShippedPipeline : public ::testing::TestWithParam<const char*> {};

TEST_P(ShippedPipeline, HasNoErrorButPluginsNotBuiltYet) {
  MetricsRegistry metrics;
  HostServices services(metrics);
  PluginRegistry registry({LPX_BUILTIN_PLUGIN_DIR}, services);
  const std::string path = std::string(LPX_SOURCE_DIR) + "/pipelines/" + GetParam();
  auto pipeline = load_pipeline(path, {}, registry);
  if (pipeline) return;
  for (const Diagnostic& d : pipeline.error().items()) {
    EXPECT_EQ(d.message.rfind("unknown plugin '", 0), 0u) << d.to_string();
    EXPECT_EQ(d.where.file, path);
  }
}

TEST(ShippedChat, LoadsCompletely) {
  MetricsRegistry metrics;
  HostServices services(metrics);
  PluginRegistry registry({LPX_BUILTIN_PLUGIN_DIR}, services);
  auto pipeline = load_pipeline(std::string(LPX_SOURCE_DIR) + "/pipelines/chat.toml", {}, registry);
  ASSERT_TRUE(pipeline) << pipeline.error().to_string();
}

// Piped, chat.toml prints only the answer; swapping the backend is one line (here --set) and
// changes nothing in it.
TEST(ShippedChat, AnswersTheCapitalOfFranceOnBothCpuBackends) {
  const std::string model = std::string(LPX_SOURCE_DIR) + "/models/SmolLM2-135M-Instruct.Q4_1.gguf";
  ASSERT_TRUE(std::filesystem::exists(model)) << "run tools/setup.sh";
  test::TempDir dir;
  test::write_file(dir / "question.txt", "What is the capital of France?\n");
  for (const char* backend : {"cpu", "cpu-scalar"}) {
    const std::string command = "cd '" + std::string(LPX_SOURCE_DIR) + "' && '" +
                                LPX_PIPELINE_BINARY + "' run pipelines/chat.toml --set backend.plugin=" +
                                backend + " < '" + (dir / "question.txt").string() + "'";
    test::CommandResult r = test::run_command({"/bin/sh", "-c", command});
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_EQ(r.out, "The capital of France is Paris.\n") << backend;
  }
}

INSTANTIATE_TEST_SUITE_P(All, ShippedPipeline,
                         ::testing::Values("chat.toml", "server.toml", "batch.toml"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace lpx::core
