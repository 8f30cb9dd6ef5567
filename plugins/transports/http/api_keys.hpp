// API keys: `Authorization: Bearer KEY` (or, for a browser's WebSocket, the subprotocol
// "lpx-api-key.KEY": websocket_protocols.hpp), compared in constant time so response timing
// tells an attacker nothing about how much of a guess was right. Each key has an id for logs
// and metrics (never the key itself) and may have its own rate limits.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "rate_limits.hpp"

namespace lpx::http {

struct ApiKey {
  std::string secret;
  std::string id;  // "id=" of the key file, else "key-" and 8 hex digits of the key's SHA-256
  KeyLimits limits;
};

// The default id of `secret`: "key-" and the first 8 hex digits of its SHA-256.
std::string default_key_id(std::string_view secret);

// One line of a key file: `KEY [id=NAME] [rpm=N] [tpm=N]`. Throws lpx::Error saying what is
// wrong with it (never quoting the key).
ApiKey parse_key_line(std::string_view line);

class ApiKeys {
 public:
  explicit ApiKeys(std::vector<ApiKey> keys) : keys_(std::move(keys)) {}

  bool required() const noexcept { return !keys_.empty(); }
  // True when no key is required, or `authorization` carries a configured key.
  bool accepts(std::string_view authorization) const noexcept {
    return !required() || find(authorization) != nullptr;
  }
  bool accepts_websocket_protocols(std::string_view offered) const noexcept {
    return !required() || find_in_websocket_protocols(offered) != nullptr;
  }
  // The configured key `authorization` ("Bearer K") carries, or nullptr.
  const ApiKey* find(std::string_view authorization) const noexcept;
  // The configured key the Sec-WebSocket-Protocol value `offered` carries as
  // "lpx-api-key.K", or nullptr.
  const ApiKey* find_in_websocket_protocols(std::string_view offered) const noexcept;

 private:
  const ApiKey* find_key(std::string_view given) const noexcept;

  std::vector<ApiKey> keys_;
};

// Equal contents; the time taken depends on the lengths only, never on where the bytes differ.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

}  // namespace lpx::http
