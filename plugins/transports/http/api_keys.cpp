#include "api_keys.hpp"

#include "websocket_protocols.hpp"

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
  return is_key(authorization.substr(kScheme.size()));
}

bool ApiKeys::accepts_websocket_protocols(std::string_view offered) const noexcept {
  if (keys_.empty()) return true;
  return any_websocket_protocol(offered, [&](std::string_view token) {
    return token.size() > kApiKeyProtocolPrefix.size() &&
           token.substr(0, kApiKeyProtocolPrefix.size()) == kApiKeyProtocolPrefix &&
           is_key(token.substr(kApiKeyProtocolPrefix.size()));
  });
}

bool ApiKeys::is_key(std::string_view given) const noexcept {
  bool ok = false;
  for (const std::string& key : keys_) ok |= constant_time_equal(key, given);  // no early exit
  return ok;
}

}  // namespace lpx::http
