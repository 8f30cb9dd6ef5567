// The HTTP server's per-key limits (token buckets), key-file lines and access-log lines, with
// an explicit clock.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <lpx/cpp/status.hpp>

#include "access_log.hpp"
#include "api_keys.hpp"
#include "rate_limits.hpp"

namespace lpx::http {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

const LimitClock::time_point t0{};

TEST(TokenBucket, HoldsAMinutesQuotaAndRefillsContinuously) {
  TokenBucket bucket(60.0, t0);  // one a second
  for (int i = 0; i < 60; ++i) EXPECT_EQ(bucket.take(1.0, t0), 0.0) << i;
  EXPECT_NEAR(bucket.take(1.0, t0), 1.0, 1e-9);  // refused: one second to the next
  EXPECT_NEAR(bucket.take(1.0, t0 + milliseconds(500)), 0.5, 1e-9);
  EXPECT_EQ(bucket.take(1.0, t0 + seconds(1)), 0.0);
  EXPECT_NEAR(bucket.level(t0 + seconds(1000)), 60.0, 1e-9) << "never above a minute's quota";
}

TEST(TokenBucket, ChargesMayGoBelowZeroAndThenWaitForARefill) {
  TokenBucket bucket(600.0, t0);  // 10 a second
  bucket.charge(1000.0, t0);      // 400 below zero
  EXPECT_NEAR(bucket.level(t0), -400.0, 1e-9);
  EXPECT_NEAR(bucket.wait_for_positive(t0), 40.1, 1e-9);  // back above zero by one token
  EXPECT_NEAR(bucket.wait_for_positive(t0 + seconds(40)), 0.1, 1e-6);
  EXPECT_EQ(bucket.wait_for_positive(t0 + milliseconds(40100)), 0.0);
}

TEST(RateLimiter, RefusesRequestsBeyondTheMinuteAndSaysHowLongToWait) {
  RateLimiter limiter;
  const KeyLimits limits{3, 0};
  for (int i = 0; i < 3; ++i) EXPECT_FALSE(limiter.admit("alice", limits, t0)) << i;
  const auto refusal = limiter.admit("alice", limits, t0);
  ASSERT_TRUE(refusal);
  EXPECT_STREQ(refusal->what, "requests");
  EXPECT_EQ(refusal->limit, 3u);
  EXPECT_NEAR(refusal->wait_seconds, 20.0, 1e-9);
  EXPECT_FALSE(limiter.admit("bob", limits, t0)) << "each key has its own buckets";
  EXPECT_TRUE(limiter.admit("alice", limits, t0 + seconds(19)));
  EXPECT_FALSE(limiter.admit("alice", limits, t0 + seconds(20)));
  EXPECT_FALSE(limiter.admit("carol", KeyLimits{}, t0)) << "no limits: always admitted";
}

TEST(RateLimiter, TokensAreChargedWhenARequestEndsAndRefuseUntilRefilled) {
  RateLimiter limiter;
  const KeyLimits limits{2, 600};  // a request every 30 s, 10 tokens a second
  EXPECT_FALSE(limiter.admit("alice", limits, t0));
  limiter.charge_tokens("alice", limits, 700, t0);  // 100 below zero
  const auto refusal = limiter.admit("alice", limits, t0);
  ASSERT_TRUE(refusal);
  EXPECT_STREQ(refusal->what, "tokens");
  EXPECT_EQ(refusal->limit, 600u);
  EXPECT_NEAR(refusal->wait_seconds, 10.1, 1e-6);
  // The refusal for tokens spent no request: one of the two is left (plus a third refilled).
  EXPECT_FALSE(limiter.admit("alice", limits, t0 + milliseconds(10200)));
  const auto second = limiter.admit("alice", limits, t0 + milliseconds(10200));
  ASSERT_TRUE(second);
  EXPECT_STREQ(second->what, "requests");
}

TEST(ApiKeyLines, TakeAnIdAndLimitsAfterTheKey) {
  const ApiKey plain = parse_key_line("  sekrit  ");
  EXPECT_EQ(plain.secret, "sekrit");
  EXPECT_EQ(plain.id, "key-7e35aaae");  // SHA-256 of "sekrit" begins 7e35aaae
  EXPECT_FALSE(plain.limits.any());
  const ApiKey full = parse_key_line("s3cr3t id=alice rpm=60\ttpm=100000");
  EXPECT_EQ(full.secret, "s3cr3t");
  EXPECT_EQ(full.id, "alice");
  EXPECT_EQ(full.limits.requests_per_minute, 60u);
  EXPECT_EQ(full.limits.tokens_per_minute, 100000u);
}

TEST(ApiKeyLines, MalformedFieldsAreRefusedWithoutQuotingTheKey) {
  for (const char* line : {"k rpm=0", "k rpm=-1", "k rpm=1.5", "k tpm=", "k id", "k colour=red",
                           "k rpm=99999999999"}) {
    try {
      parse_key_line(line);
      ADD_FAILURE() << line << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).find("k "), std::string::npos) << e.what();
    }
  }
}

TEST(ApiKeys, FindReturnsTheMatchingKeysRecord) {
  const ApiKeys keys({parse_key_line("one id=first"), parse_key_line("two id=second rpm=5")});
  const ApiKey* key = keys.find("Bearer two");
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(key->id, "second");
  EXPECT_EQ(key->limits.requests_per_minute, 5u);
  EXPECT_EQ(keys.find("Bearer three"), nullptr);
  EXPECT_EQ(keys.find("two"), nullptr);
  ASSERT_NE(keys.find_in_websocket_protocols("lpx, lpx-api-key.one"), nullptr);
  EXPECT_EQ(keys.find_in_websocket_protocols("lpx, lpx-api-key.one")->id, "first");
}

TEST(AccessLog, RequestIdsAreTheClientsWhenSafeElseNew) {
  EXPECT_EQ(request_id("abc-123_x.y:z/w=+"), "abc-123_x.y:z/w=+");
  for (std::string_view unsafe : {std::string_view(""), std::string_view("has space"),
                                  std::string_view("new\nline"), std::string_view("quote\"")}) {
    const std::string id = request_id(unsafe);
    EXPECT_EQ(id.size(), 16u) << unsafe;
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
  }
  EXPECT_EQ(request_id(std::string(129, 'a')).size(), 16u);
  EXPECT_NE(request_id(""), request_id("")) << "generated ids differ";
}

AccessRecord chat_record() {
  AccessRecord r;
  r.request_id = "r1";
  r.client = "127.0.0.1:5000";
  r.method = "POST";
  r.endpoint = "/v1/chat/completions";
  r.key_id = "alice";
  r.model = "SmolLM2";
  r.status = 200;
  r.generation = true;
  r.prompt_tokens = 31;
  r.cached_tokens = 16;
  r.completion_tokens = 64;
  r.ttft_ms = 17.25;
  r.finish_reason = "length";
  return r;
}

TEST(AccessLog, TextLinesCarryEveryField) {
  EXPECT_EQ(access_line(chat_record(), AccessLogFormat::kText, 402.06),
            "access: id=r1 client=127.0.0.1:5000 method=POST endpoint=/v1/chat/completions "
            "key=alice model=SmolLM2 status=200 prompt_tokens=31 cached_tokens=16 "
            "completion_tokens=64 ttft_ms=17.2 finish=length duration_ms=402.1");
  AccessRecord health;
  health.request_id = "r2";
  health.client = "::1:9";
  health.method = "GET";
  health.endpoint = "/health";
  health.status = 200;
  EXPECT_EQ(access_line(health, AccessLogFormat::kText, 0.5),
            "access: id=r2 client=::1:9 method=GET endpoint=/health key=- model=- status=200 "
            "duration_ms=0.5");
}

TEST(AccessLog, JsonLinesAreOneObject) {
  const boost::json::object line =
      boost::json::parse(access_line(chat_record(), AccessLogFormat::kJson, 402.0)).as_object();
  EXPECT_EQ(line.at("event"), "access");
  EXPECT_EQ(line.at("request_id"), "r1");
  EXPECT_EQ(line.at("key_id"), "alice");
  EXPECT_EQ(line.at("status").as_int64(), 200);
  EXPECT_EQ(line.at("prompt_tokens").as_int64(), 31);
  EXPECT_EQ(line.at("cached_tokens").as_int64(), 16);
  EXPECT_EQ(line.at("completion_tokens").as_int64(), 64);
  EXPECT_DOUBLE_EQ(line.at("ttft_ms").as_double(), 17.25);
  EXPECT_EQ(line.at("finish_reason"), "length");
  EXPECT_DOUBLE_EQ(line.at("duration_ms").as_double(), 402.0);
  AccessRecord anonymous = chat_record();
  anonymous.key_id.clear();
  anonymous.ttft_ms.reset();
  const boost::json::object other =
      boost::json::parse(access_line(anonymous, AccessLogFormat::kJson, 1.0)).as_object();
  EXPECT_TRUE(other.at("key_id").is_null());
  EXPECT_TRUE(other.at("ttft_ms").is_null());
}

TEST(AccessLog, EntriesRunTheirEndHookOnceWhenTheLastHolderLetsGo) {
  int ended = 0;
  std::uint64_t tokens = 0;
  {
    auto entry = std::make_shared<AccessEntry>(AccessLogFormat::kOff, chat_record());
    entry->on_end = [&](const AccessRecord& r) {
      ++ended;
      tokens = r.prompt_tokens + r.completion_tokens;
    };
    auto second_holder = entry;
    entry.reset();
    EXPECT_EQ(ended, 0);
    second_holder->record.completion_tokens = 70;
  }
  EXPECT_EQ(ended, 1);
  EXPECT_EQ(tokens, 101u);
}

TEST(AccessLog, FormatsAreNamedOffTextOrJson) {
  EXPECT_EQ(access_log_format("text"), AccessLogFormat::kText);
  EXPECT_EQ(access_log_format("json"), AccessLogFormat::kJson);
  EXPECT_EQ(access_log_format("off"), AccessLogFormat::kOff);
  EXPECT_FALSE(access_log_format("yaml"));
}

}  // namespace
}  // namespace lpx::http
