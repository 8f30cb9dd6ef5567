#include "pipeline/pipeline_document.hpp"

#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lpx::core {
namespace {

using test::TempDir;
using test::write_file;

TEST(PipelineDocument, ReportsSyntaxErrorsWithTheirPosition) {
  TempDir dir;
  write_file(dir / "p.toml", "[transport]\nplugin = \"x\"\nbroken = \n");
  PipelineDocument document;
  Diagnostics diagnostics;
  EXPECT_FALSE(document.load((dir / "p.toml").string(), {}, diagnostics));
  ASSERT_EQ(diagnostics.items().size(), 1u);
  EXPECT_EQ(diagnostics.items()[0].where.line, 3u);
  EXPECT_EQ(diagnostics.items()[0].where.file, (dir / "p.toml").string());
}

TEST(PipelineDocument, OverridesTypeValuesAndRememberTheirOrigin) {
  TempDir dir;
  write_file(dir / "p.toml", "[sampler]\nplugin = \"greedy\"\ntemperature = 0.8\n");
  PipelineDocument document;
  Diagnostics diagnostics;
  ASSERT_TRUE(document.load((dir / "p.toml").string(),
                            {"sampler.temperature=0.2", "model.path=models/x.gguf",
                             "sampler.stop=[\"a\", \"b\"]"},
                            diagnostics))
      << diagnostics.to_string();
  const toml::table& root = document.root();
  EXPECT_DOUBLE_EQ(*root["sampler"]["temperature"].value<double>(), 0.2);
  EXPECT_EQ(*root["model"]["path"].value<std::string>(), "models/x.gguf");  // plain string
  EXPECT_EQ(root["sampler"]["stop"].as_array()->size(), 2u);
  const toml::node& t = *root["sampler"]["temperature"].node();
  EXPECT_EQ(document.where(t, "sampler.temperature").to_string(), "--set sampler.temperature=0.2");
  const toml::node& plugin = *root["sampler"]["plugin"].node();
  EXPECT_EQ(document.where(plugin, "sampler.plugin").to_string(),
            (dir / "p.toml").string() + ":2:10");
}

TEST(PipelineDocument, RejectsMalformedOverrides) {
  TempDir dir;
  write_file(dir / "p.toml", "name = 1\n");
  PipelineDocument document;
  Diagnostics diagnostics;
  EXPECT_FALSE(document.load((dir / "p.toml").string(), {"novalue", "a..b=1", "name.x=2"},
                             diagnostics));
  ASSERT_EQ(diagnostics.items().size(), 3u);
  EXPECT_NE(diagnostics.items()[0].message.find("expected KEY=VALUE"), std::string::npos);
  EXPECT_NE(diagnostics.items()[1].message.find("empty part"), std::string::npos);
  EXPECT_NE(diagnostics.items()[2].message.find("'name' is not a table"), std::string::npos);
}

}  // namespace
}  // namespace lpx::core
