// The pipeline files shipped in pipelines/ stay valid: no syntax errors, no unknown keys, no
// wrong types. The only errors allowed are plugins this build does not have yet.
#include <gtest/gtest.h>

#include "pipeline/pipeline.hpp"

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

INSTANTIATE_TEST_SUITE_P(All, ShippedPipeline,
                         ::testing::Values("chat.toml", "server.toml", "batch.toml"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           return name.substr(0, name.find('.'));
                         });

}  // namespace
}  // namespace lpx::core
