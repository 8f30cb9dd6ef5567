// `lpx-pipeline bench`: llama-bench-shaped tests (ppN, tgN at each batch) with latency, memory
// and roofline columns; --json is one array whose elements carry `test` and `tokens_per_s`.
#include <gtest/gtest.h>

#include <filesystem>

#include <boost/json.hpp>

#include "support/test_support.hpp"

namespace lpx::test {
namespace {

const std::string kTiny = std::string(LPX_SOURCE_DIR) + "/../shared/models/llama-2-tiny-random.gguf";

TEST(CliBench, JsonHasOneElementPerTestAndBatch) {
  ASSERT_TRUE(std::filesystem::exists(kTiny)) << kTiny;
  CommandResult r = run_lpx({"--log-level", "warn", "bench", "--model", kTiny, "-p", "16,32", "-n", "8",
                             "--batch", "1,3", "--reps", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::array items = boost::json::parse(r.out).as_array();
  ASSERT_EQ(items.size(), 4u) << r.out;  // pp16, pp32, tg8 x batch 1, tg8 x batch 3
  const char* tests[] = {"pp16", "pp32", "tg8", "tg8"};
  const std::int64_t batches[] = {1, 1, 1, 3};
  for (std::size_t i = 0; i < items.size(); ++i) {
    const boost::json::object& o = items[i].as_object();
    EXPECT_EQ(o.at("test").as_string(), tests[i]);
    EXPECT_EQ(o.at("batch").to_number<std::int64_t>(), batches[i]);
    EXPECT_GT(o.at("tokens_per_s").to_number<double>(), 0.0);
    EXPECT_GT(o.at("ttft_ms").to_number<double>(), 0.0);
    EXPECT_GT(o.at("peak_rss_bytes").to_number<double>(), 0.0);
    // Every result names the kernel path and the CPU it ran on.
    EXPECT_NE(std::string(o.at("backend_options").as_string()).find("kernels="), std::string::npos) << o;
    EXPECT_NE(std::string(o.at("cpu").as_string()).find(" ("), std::string::npos) << o;
    if (tests[i][0] == 't') {
      EXPECT_LE(o.at("itl_p50_ms").to_number<double>(), o.at("itl_p99_ms").to_number<double>());
      EXPECT_GT(o.at("roofline_percent").to_number<double>(), 0.0);
    }
  }
}

// -d: tg tests after a prompt of D tokens (llama-bench's "tgN @ dD"), depth by depth and batch
// by batch; pp tests ignore it.
TEST(CliBench, DepthRunsEveryTgTestAfterThatManyPositions) {
  ASSERT_TRUE(std::filesystem::exists(kTiny)) << kTiny;
  CommandResult r = run_lpx({"--log-level", "warn", "bench", "--model", kTiny, "-p", "8", "-n", "8",
                             "-d", "0,200", "--batch", "1,2", "--reps", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::array items = boost::json::parse(r.out).as_array();
  ASSERT_EQ(items.size(), 5u) << r.out;  // pp8, then tg8 at (d0, b1) (d0, b2) (d200, b1) (d200, b2)
  EXPECT_FALSE(items[0].as_object().contains("depth")) << "pp tests have no depth: " << r.out;
  const std::int64_t depths[] = {0, 0, 200, 200}, batches[] = {1, 2, 1, 2};
  for (std::size_t i = 1; i < items.size(); ++i) {
    const boost::json::object& o = items[i].as_object();
    EXPECT_EQ(o.at("test").as_string(), "tg8");
    EXPECT_EQ(o.at("depth").to_number<std::int64_t>(), depths[i - 1]);
    EXPECT_EQ(o.at("batch").to_number<std::int64_t>(), batches[i - 1]);
    EXPECT_GT(o.at("tokens_per_s").to_number<double>(), 0.0);
  }
  CommandResult table = run_lpx({"--log-level", "warn", "bench", "--model", kTiny, "-p", "0", "-n", "4",
                                 "-d", "64", "--reps", "1"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("| tg4 @ d64 | 1 |"), std::string::npos) << table.out;
}

TEST(CliBench, TheTableAndASyntheticModel) {
  CommandResult r = run_lpx({"--log-level", "warn", "bench", "--model", "synth:smollm2-135m:Q4_0", "-p", "8",
                             "-n", "4", "--reps", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| pp8 | 1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| tg4 | 1 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("synthetic smollm2-135m"), std::string::npos) << r.out;
  CommandResult bad = run_lpx({"bench", "--model", "synth:gpt-5:Q8_0"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("unknown shape 'gpt-5'"), std::string::npos) << bad.err;
}

// --sample: every request samples with the given settings, which the report names; a setting
// the samplers refuse, or an unknown key, is an error before anything is measured.
TEST(CliBench, SampledDecodingIsMeasuredAndNamed) {
  ASSERT_TRUE(std::filesystem::exists(kTiny)) << kTiny;
  CommandResult r = run_lpx({"--log-level", "warn", "bench", "--model", kTiny, "-p", "8", "-n", "6",
                             "--reps", "1", "--sample", "temperature=0.8", "top_p=0.95", "seed=7",
                             "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const boost::json::array items = boost::json::parse(r.out).as_array();
  ASSERT_EQ(items.size(), 2u) << r.out;
  EXPECT_EQ(items[1].as_object().at("sampling").as_string(),
            "sampled (temperature=0.8 top_p=0.95 seed=7)");
  CommandResult greedy = run_lpx({"--log-level", "warn", "bench", "--model", kTiny, "-p", "8",
                                  "-n", "4", "--reps", "1"});
  ASSERT_EQ(greedy.exit_code, 0) << greedy.err;
  EXPECT_NE(greedy.out.find("tokens: greedy"), std::string::npos) << greedy.out;

  CommandResult unknown = run_lpx({"bench", "--model", kTiny, "--sample", "warmth=2"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("'warmth=2' is not one of temperature"), std::string::npos)
      << unknown.err;
  CommandResult refused = run_lpx({"bench", "--model", kTiny, "-p", "8", "-n", "4", "--reps", "1",
                                   "--sample", "top_p=1.5"});
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find("top_p = 1.5 is invalid"), std::string::npos) << refused.err;
}

}  // namespace
}  // namespace lpx::test
