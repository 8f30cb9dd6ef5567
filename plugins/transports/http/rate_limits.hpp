// Per-key limits: requests per minute and tokens per minute, each a token bucket that holds one
// minute's quota and refills continuously (a burst up to the quota, then the rate), as OpenAI's
// limits behave. A request takes one request at admission. Tokens (prompt plus completion, as
// used) are charged when the request ends, so the token bucket may go below zero; a key whose
// token bucket is at or below zero is refused until it refills. Refusals say how long to wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace lpx::http {

using LimitClock = std::chrono::steady_clock;

class TokenBucket {
 public:
  TokenBucket(double per_minute, LimitClock::time_point now);
  // Takes `amount` and returns 0 when the bucket holds it; else takes nothing and returns the
  // seconds until it will.
  double take(double amount, LimitClock::time_point now);
  // Seconds until the level is above zero (0 when it is).
  double wait_for_positive(LimitClock::time_point now);
  // Removes `amount`, below zero if need be.
  void charge(double amount, LimitClock::time_point now);
  double level(LimitClock::time_point now);

 private:
  void refill(LimitClock::time_point now);

  double capacity_;
  double per_second_;
  double level_;
  LimitClock::time_point last_;
};

struct KeyLimits {
  std::uint32_t requests_per_minute = 0;  // 0 = unlimited
  std::uint64_t tokens_per_minute = 0;    // 0 = unlimited
  bool any() const noexcept { return requests_per_minute != 0 || tokens_per_minute != 0; }
};

struct LimitRefusal {
  const char* what;       // "requests" or "tokens"
  std::uint64_t limit;    // per minute
  double wait_seconds;    // until a retry can pass
};

class RateLimiter {
 public:
  // Admits one request of `key_id` (taking one request from its bucket), or says why not.
  std::optional<LimitRefusal> admit(const std::string& key_id, const KeyLimits& limits,
                                    LimitClock::time_point now = LimitClock::now());
  // Charges the tokens a request of `key_id` used.
  void charge_tokens(const std::string& key_id, const KeyLimits& limits, std::uint64_t tokens,
                     LimitClock::time_point now = LimitClock::now());

 private:
  struct Buckets {
    std::optional<TokenBucket> requests, tokens;
  };
  Buckets& buckets_of(const std::string& key_id, const KeyLimits& limits, LimitClock::time_point now);

  std::mutex mutex_;
  std::unordered_map<std::string, Buckets> buckets_;
};

}  // namespace lpx::http
