// The WebSocket subprotocols of /v1/ws. Browsers cannot set headers on a WebSocket, so a page
// that needs an API key offers it as a subprotocol (as OpenAI's Realtime API does for browsers):
//   new WebSocket(url, ["lpx", "lpx-api-key." + key])
// The server selects "lpx" when it is offered and never echoes the key; a key offered without
// "lpx" is refused (400), since clients fail a handshake that selects none of their offers. A
// key travels this way only when it is made of token characters (RFC 7230 §3.2.6: letters,
// digits and !#$%&'*+-.^_`|~), as the output of `openssl rand -hex 32` is.
#pragma once

#include <string>
#include <string_view>

#include <boost/beast/http/field.hpp>

namespace lpx::http {

inline constexpr std::string_view kWebSocketProtocol = "lpx";
inline constexpr std::string_view kApiKeyProtocolPrefix = "lpx-api-key.";

// Calls visit(token) for each comma-separated token of a Sec-WebSocket-Protocol value, spaces and
// tabs trimmed, until it returns true; returns whether one did.
template <class Visit>
bool any_websocket_protocol(std::string_view offered, Visit visit) {
  while (!offered.empty()) {
    const std::size_t comma = offered.find(',');
    std::string_view token = offered.substr(0, comma);
    offered = comma == std::string_view::npos ? std::string_view() : offered.substr(comma + 1);
    const std::size_t first = token.find_first_not_of(" \t");
    if (first == std::string_view::npos) continue;
    token = token.substr(first, token.find_last_not_of(" \t") - first + 1);
    if (visit(token)) return true;
  }
  return false;
}

// Every Sec-WebSocket-Protocol field of a request's headers, joined with commas (RFC 6455 lets
// a client split its list over several fields).
template <class Fields>
std::string offered_websocket_protocols(const Fields& fields) {
  std::string offered;
  const auto [first, last] = fields.equal_range(boost::beast::http::field::sec_websocket_protocol);
  for (auto it = first; it != last; ++it) {
    if (!offered.empty()) offered += ',';
    offered.append(it->value().data(), it->value().size());
  }
  return offered;
}

// True when `offered` lists an "lpx-api-key." token but not "lpx".
inline bool offers_key_without_lpx(std::string_view offered) {
  bool key = false;
  const bool lpx = any_websocket_protocol(offered, [&](std::string_view token) {
    key = key || token.substr(0, kApiKeyProtocolPrefix.size()) == kApiKeyProtocolPrefix;
    return token == kWebSocketProtocol;
  });
  return key && !lpx;
}

}  // namespace lpx::http
