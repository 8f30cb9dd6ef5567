// `lpx-pipeline plugins`: lists what can be loaded, reports what cannot, never crashes.
#include <boost/json.hpp>
#include <gtest/gtest.h>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

TEST(CliPlugins, ListsTheBuiltInPlugins) {
  CommandResult r = run_lpx({"plugins"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NAME"), std::string::npos);
  EXPECT_NE(r.out.find("greedy            sampler        1.0.0     " LPX_ABI_TEXT),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(LPX_BUILTIN_PLUGIN_DIR "/lpx-greedy.so"), std::string::npos);
}

TEST(CliPlugins, ReportsBrokenPluginsAndStillListsTheRest) {
  CommandResult r =
      run_lpx({"plugins"}, std::string(LPX_TEST_BROKEN_PLUGIN_DIR) + ":" + LPX_TEST_GOOD_PLUGIN_DIR);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("test-transport"), std::string::npos);
  EXPECT_NE(r.out.find("greedy"), std::string::npos);
  for (const char* name : {"abi-major-newer", "abi-minor-newer", "init-throws", "init-fails",
                           "missing-entry", "null-descriptor", "short-descriptor", "wrong-name",
                           "bad-option-default"}) {
    EXPECT_NE(r.err.find(std::string("warning: refused plugin '") + name + "'"), std::string::npos)
        << name << "\n" << r.err;
  }
}

TEST(CliPlugins, ShowsOptionsAndSpeaksJson) {
  CommandResult text = run_lpx({"plugins", "--options"}, LPX_TEST_GOOD_PLUGIN_DIR);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("option count (an integer, default 1): A bounded integer"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("option output (a string, required): File to write"), std::string::npos);

  CommandResult json = run_lpx({"plugins", "--json"}, LPX_TEST_GOOD_PLUGIN_DIR);
  ASSERT_EQ(json.exit_code, 0);
  const boost::json::value doc = boost::json::parse(json.out);
  bool found = false;
  for (const auto& plugin : doc.at("plugins").as_array()) {
    if (plugin.at("name") != "test-transport") continue;
    found = true;
    EXPECT_EQ(plugin.at("kind"), "transport");
    EXPECT_EQ(plugin.at("options").as_array().size(), 8u);
    EXPECT_EQ(plugin.at("capabilities").as_array().at(0), "transport:test");
  }
  EXPECT_TRUE(found) << json.out;
  EXPECT_TRUE(doc.at("refused").as_array().empty());
}

}  // namespace
}  // namespace lpx::test
