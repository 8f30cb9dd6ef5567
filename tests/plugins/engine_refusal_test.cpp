// The engine's refusals as the transports answer them: the HTTP status, OpenAI type, param and
// code follow from the status code and field alone, whatever the message says.
#include <gtest/gtest.h>

#include "api_error.hpp"

namespace lpx::test {
namespace {

struct Case {
  lpx_status_code code;
  const char* field;
  int status;
  const char* type;
  const char* param;
  const char* openai_code;
};

TEST(EngineRefusal, TheStatusCodeAndFieldDecideTheAnswer) {
  const Case cases[] = {
      {LPX_ERR_INVALID_ARGUMENT, "logit_bias", 400, "invalid_request_error", "logit_bias", ""},
      {LPX_ERR_INVALID_ARGUMENT, "", 400, "invalid_request_error", "messages", ""},
      {LPX_ERR_UNSUPPORTED, "top_k", 400, "invalid_request_error", "top_k", ""},
      {LPX_ERR_RESOURCE_EXHAUSTED, "prompt", 400, "invalid_request_error", "prompt",
       "context_length_exceeded"},
      {LPX_ERR_RESOURCE_EXHAUSTED, "max_tokens", 400, "invalid_request_error", "max_tokens",
       "context_length_exceeded"},
      {LPX_ERR_RESOURCE_EXHAUSTED, "", 413, "invalid_request_error", "", ""},
      {LPX_ERR_NOT_FOUND, "session", 404, "not_found_error", "session", ""},
      {LPX_ERR_CONFLICT, "session", 409, "conflict_error", "session", ""},
      {LPX_ERR_UNAVAILABLE, "", 503, "server_error", "", ""},
      {LPX_ERR_OUT_OF_MEMORY, "", 503, "server_error", "", ""},
      {LPX_ERR_INTERNAL, "", 500, "server_error", "", ""},
  };
  for (const Case& c : cases) {
    // The same misleading message every time: only the code and field may matter.
    const openai::ApiError answer =
        openai::engine_refusal(Error(c.code, "logit_bias: max_tokens stop", c.field), "messages");
    EXPECT_EQ(answer.status(), c.status) << c.code << " " << c.field;
    EXPECT_EQ(answer.type(), c.type) << c.code;
    EXPECT_EQ(answer.param(), c.param) << c.code;
    EXPECT_EQ(answer.code(), c.openai_code) << c.code;
    EXPECT_EQ(answer.retry_after() > 0, c.status == 503) << c.code;
  }
}

// The field crosses the C ABI in lpx_status and comes back as lpx::Error's.
TEST(EngineRefusal, TheFieldSurvivesTheStatusRoundTrip) {
  lpx_status* status = make_status(LPX_ERR_CONFLICT, "busy", "session");
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->struct_size, sizeof(lpx_status));
  EXPECT_STREQ(lpx_status_field(status), "session");
  try {
    throw_if_error(status);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), LPX_ERR_CONFLICT);
    EXPECT_EQ(e.field(), "session");
    EXPECT_STREQ(e.what(), "busy");
  }
  lpx_status* plain = make_status(LPX_ERR_IO, "disk");
  EXPECT_EQ(lpx_status_field(plain), nullptr);
  plain->release(plain);
  // A status made before 2.0 had no size: its field is never read.
  lpx_status old{LPX_ERR_IO, "old", nullptr, 0, "garbage"};
  EXPECT_EQ(lpx_status_field(&old), nullptr);
}

}  // namespace
}  // namespace lpx::test
