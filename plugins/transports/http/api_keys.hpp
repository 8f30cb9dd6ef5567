// API keys: `Authorization: Bearer KEY` (or, for a browser's WebSocket, the subprotocol
// "lpx-api-key.KEY": websocket_protocols.hpp), compared in constant time so response timing
// tells an attacker nothing about how much of a guess was right.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lpx::http {

class ApiKeys {
 public:
  explicit ApiKeys(std::vector<std::string> keys) : keys_(std::move(keys)) {}

  bool required() const noexcept { return !keys_.empty(); }
  // True when no key is required, or `authorization` is "Bearer K" for a configured K.
  bool accepts(std::string_view authorization) const noexcept;
  // True when no key is required, or the Sec-WebSocket-Protocol value `offered` lists
  // "lpx-api-key.K" for a configured K.
  bool accepts_websocket_protocols(std::string_view offered) const noexcept;

 private:
  bool is_key(std::string_view given) const noexcept;

  std::vector<std::string> keys_;
};

// Equal contents; the time taken depends on the lengths only, never on where the bytes differ.
bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

}  // namespace lpx::http
