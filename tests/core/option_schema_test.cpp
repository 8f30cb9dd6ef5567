#include "pipeline/option_schema.hpp"

#include <gtest/gtest.h>

namespace lpx::core {
namespace {

toml::table parse(const std::string& text) { return toml::parse(text); }

OptionSpec spec_of(const lpx_option_spec& c) {
  auto spec = option_spec_from_c(c);
  EXPECT_TRUE(spec) << spec.error();
  return *spec;
}

TEST(OptionSchema, ConvertsEveryType) {
  auto t = parse(R"(s = "x"
i = 7
f = 0.25
fi = 2
b = true
sl = ["a", "b"]
il = [1, 2, 3])");
  auto get = [&](const char* key, lpx_option_type type) {
    OptionSpec spec;
    spec.name = key;
    spec.type = type;
    auto v = convert_option(*t.get(key), spec);
    EXPECT_TRUE(v) << key << ": " << v.error();
    return *v;
  };
  EXPECT_EQ(std::get<std::string>(get("s", LPX_OPTION_STRING)), "x");
  EXPECT_EQ(std::get<std::int64_t>(get("i", LPX_OPTION_INT)), 7);
  EXPECT_DOUBLE_EQ(std::get<double>(get("f", LPX_OPTION_FLOAT)), 0.25);
  EXPECT_DOUBLE_EQ(std::get<double>(get("fi", LPX_OPTION_FLOAT)), 2.0);  // integers widen
  EXPECT_TRUE(std::get<bool>(get("b", LPX_OPTION_BOOL)));
  EXPECT_EQ(std::get<std::vector<std::string>>(get("sl", LPX_OPTION_STRING_LIST)),
            (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(get("il", LPX_OPTION_INT_LIST)),
            (std::vector<std::int64_t>{1, 2, 3}));
}

TEST(OptionSchema, ExplainsWrongTypes) {
  auto t = parse("v = \"eight\"\nf = 1.5\nl = [1, \"x\"]");
  OptionSpec spec;
  spec.name = "v";
  spec.type = LPX_OPTION_INT;
  auto v = convert_option(*t.get("v"), spec);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error().message, "expected an integer, found a string");
  auto f = convert_option(*t.get("f"), spec);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error().message, "expected an integer, found a float");  // no silent truncation
  spec.type = LPX_OPTION_INT_LIST;
  auto l = convert_option(*t.get("l"), spec);
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message, "item 1: expected an integer, found a string");
}

TEST(OptionSchema, EnforcesRangesAndChoices) {
  auto t = parse("p = 1.5\nk = -1\nmode = \"fast\"");
  OptionSpec p = spec_of({"p", LPX_OPTION_FLOAT, LPX_OPTION_HAS_RANGE, nullptr, "", 0, 1, nullptr});
  auto pv = convert_option(*t.get("p"), p);
  ASSERT_FALSE(pv);
  EXPECT_EQ(pv.error().message, "1.5 is out of range [0, 1]");
  OptionSpec k = spec_of({"k", LPX_OPTION_INT, LPX_OPTION_HAS_RANGE, nullptr, "", 0, 100, nullptr});
  EXPECT_FALSE(convert_option(*t.get("k"), k));
  OptionSpec mode = spec_of({"mode", LPX_OPTION_STRING, 0, nullptr, "", 0, 0, "latency|throughput"});
  auto mv = convert_option(*t.get("mode"), mode);
  ASSERT_FALSE(mv);
  EXPECT_EQ(mv.error().message, "'fast' is not one of: latency, throughput");
}

TEST(OptionSchema, ParsesDefaultsAndRejectsBrokenSpecs) {
  OptionSpec ok = spec_of({"top_k", LPX_OPTION_INT, 0, "40", "", 0, 0, nullptr});
  ASSERT_TRUE(ok.default_value.has_value());
  EXPECT_EQ(std::get<std::int64_t>(*ok.default_value), 40);

  auto bad_default = option_spec_from_c({"top_k", LPX_OPTION_INT, 0, "\"forty\"", "", 0, 0, nullptr});
  ASSERT_FALSE(bad_default);
  EXPECT_NE(bad_default.error().message.find("invalid default"), std::string::npos);
  EXPECT_FALSE(option_spec_from_c({"Top-K", LPX_OPTION_INT, 0, nullptr, "", 0, 0, nullptr}));
  EXPECT_FALSE(option_spec_from_c({"x", 99, 0, nullptr, "", 0, 0, nullptr}));
  EXPECT_FALSE(option_spec_from_c({"x", LPX_OPTION_INT, LPX_OPTION_REQUIRED, "1", "", 0, 0, nullptr}));
  EXPECT_FALSE(option_spec_from_c({"x", LPX_OPTION_INT, LPX_OPTION_HAS_RANGE, nullptr, "", 2, 1, nullptr}));
  EXPECT_FALSE(option_spec_from_c({"x", LPX_OPTION_INT, 0, "1 +", "", 0, 0, nullptr}));
}

TEST(OptionSchema, PrintsValuesAsToml) {
  EXPECT_EQ(to_toml_text(OptionValue(std::string("plain"))), "'plain'");
  EXPECT_EQ(to_toml_text(OptionValue(std::string("it's"))), "\"it's\"");
  EXPECT_EQ(to_toml_text(OptionValue(std::int64_t{3})), "3");
  EXPECT_EQ(to_toml_text(OptionValue(std::vector<std::int64_t>{1, 2})), "[1, 2]");
  EXPECT_EQ(to_toml_text(OptionValue(true)), "true");
}

}  // namespace
}  // namespace lpx::core
