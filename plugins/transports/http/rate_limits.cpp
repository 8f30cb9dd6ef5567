#include "rate_limits.hpp"

#include <algorithm>

namespace lpx::http {

TokenBucket::TokenBucket(double per_minute, LimitClock::time_point now)
    : capacity_(per_minute), per_second_(per_minute / 60.0), level_(per_minute), last_(now) {}

void TokenBucket::refill(LimitClock::time_point now) {
  if (now > last_) {
    level_ = std::min(capacity_, level_ + per_second_ * std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
}

double TokenBucket::take(double amount, LimitClock::time_point now) {
  refill(now);
  if (level_ >= amount) {
    level_ -= amount;
    return 0.0;
  }
  return (amount - level_) / per_second_;
}

double TokenBucket::wait_for_positive(LimitClock::time_point now) {
  refill(now);
  // Waiting until the level is exactly zero would still refuse: ask for a little more.
  return level_ > 0.0 ? 0.0 : (-level_ + std::min(1.0, capacity_)) / per_second_;
}

void TokenBucket::charge(double amount, LimitClock::time_point now) {
  refill(now);
  level_ -= amount;
}

double TokenBucket::level(LimitClock::time_point now) {
  refill(now);
  return level_;
}

RateLimiter::Buckets& RateLimiter::buckets_of(const std::string& key_id, const KeyLimits& limits,
                                              LimitClock::time_point now) {
  Buckets& b = buckets_[key_id];
  if (limits.requests_per_minute != 0 && !b.requests) {
    b.requests.emplace(static_cast<double>(limits.requests_per_minute), now);
  }
  if (limits.tokens_per_minute != 0 && !b.tokens) {
    b.tokens.emplace(static_cast<double>(limits.tokens_per_minute), now);
  }
  return b;
}

std::optional<LimitRefusal> RateLimiter::admit(const std::string& key_id, const KeyLimits& limits,
                                               LimitClock::time_point now) {
  if (!limits.any()) return std::nullopt;
  std::lock_guard lock(mutex_);
  Buckets& b = buckets_of(key_id, limits, now);
  // Tokens first: a refusal must not spend a request.
  if (b.tokens) {
    if (const double wait = b.tokens->wait_for_positive(now); wait > 0.0) {
      return LimitRefusal{"tokens", limits.tokens_per_minute, wait};
    }
  }
  if (b.requests) {
    if (const double wait = b.requests->take(1.0, now); wait > 0.0) {
      return LimitRefusal{"requests", limits.requests_per_minute, wait};
    }
  }
  return std::nullopt;
}

void RateLimiter::charge_tokens(const std::string& key_id, const KeyLimits& limits,
                                std::uint64_t tokens, LimitClock::time_point now) {
  if (limits.tokens_per_minute == 0 || tokens == 0) return;
  std::lock_guard lock(mutex_);
  buckets_of(key_id, limits, now).tokens->charge(static_cast<double>(tokens), now);
}

}  // namespace lpx::http
