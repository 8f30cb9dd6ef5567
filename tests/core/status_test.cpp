// The core's Status: made where a failure is found, passed up with context, and its code and
// field survive every step (what the C API and the HTTP transport answer with).
#include "util/status.hpp"

#include <gtest/gtest.h>

#include "util/expected.hpp"

namespace lpx::core {
namespace {

Expected<int> parse_positive(int value) {
  if (value <= 0) return invalid_argument("must be positive, not " + std::to_string(value), "n");
  return value;
}

Expected<int> read_setting(int value) {
  auto parsed = parse_positive(value);
  if (!parsed) return unexpected(std::move(parsed).error().with_context("settings.toml"));
  return *parsed * 2;
}

TEST(Status, ContextIsPrefixedAndCodeAndFieldSurvive) {
  auto result = read_setting(-3);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(result.error().message, "settings.toml: must be positive, not -3");
  EXPECT_EQ(result.error().field, "n");
  EXPECT_EQ(*read_setting(4), 8);
}

TEST(Status, PrefixedAndAboutChangeOnlyWhatTheySay) {
  const Status original(LPX_ERR_RESOURCE_EXHAUSTED, "queue full", "prompt");
  const Status copy = original.prefixed("[engine] ");
  EXPECT_EQ(copy.message, "[engine] queue full");
  EXPECT_EQ(copy.code, LPX_ERR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(copy.field, "prompt");
  EXPECT_EQ(original.message, "queue full") << "the const& overload copies";
  const Status moved = Status(original).about("max_tokens");
  EXPECT_EQ(moved.field, "max_tokens");
  EXPECT_EQ(moved.message, "queue full");
}

TEST(Status, EachFactoryMakesItsCode) {
  EXPECT_EQ(invalid_argument("x").value().code, LPX_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(not_found("x").value().code, LPX_ERR_NOT_FOUND);
  EXPECT_EQ(unsupported("x").value().code, LPX_ERR_UNSUPPORTED);
  EXPECT_EQ(io_error("x").value().code, LPX_ERR_IO);
  EXPECT_EQ(resource_exhausted("x").value().code, LPX_ERR_RESOURCE_EXHAUSTED);
  EXPECT_EQ(unavailable("x").value().code, LPX_ERR_UNAVAILABLE);
  EXPECT_EQ(internal_error("x").value().code, LPX_ERR_INTERNAL);
  EXPECT_EQ(fail(LPX_ERR_CANCELLED, "x", "f").value().field, "f");
}

}  // namespace
}  // namespace lpx::core
