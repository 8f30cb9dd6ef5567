#include "api_keys.hpp"

namespace lpx::http {

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
  // Walk the whole of `b` whatever happens; compare against `a` cyclically so the loop does not
  // branch on a's length either.
  unsigned diff = a.size() != b.size() ? 1u : 0u;
  if (a.empty()) return b.empty();
  for (std::size_t i = 0; i < b.size(); ++i) {
    diff |= static_cast<unsigned char>(a[i % a.size()]) ^ static_cast<unsigned char>(b[i]);
  }
  // Read through a volatile so the compiler cannot turn the loop into an early exit.
  volatile unsigned result = diff;
  return result == 0;
}

bool ApiKeys::accepts(std::string_view authorization) const noexcept {
  if (keys_.empty()) return true;
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size() ||
      !constant_time_equal(authorization.substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  const std::string_view given = authorization.substr(kScheme.size());
  bool ok = false;
  for (const std::string& key : keys_) ok |= constant_time_equal(key, given);  // no early exit
  return ok;
}

}  // namespace lpx::http
