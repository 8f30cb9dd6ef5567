#include "api_keys.hpp"

#include <openssl/evp.h>

#include <charconv>

#include <lpx/cpp/status.hpp>

#include "websocket_protocols.hpp"

namespace lpx::http {
namespace {

template <class T>
T positive_number(std::string_view field, std::string_view value) {
  T n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end != value.data() + value.size() || n == 0) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, std::string(field) + " must be a positive whole number");
  }
  return n;
}

}  // namespace

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

std::string default_key_id(std::string_view secret) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(secret.data(), secret.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw Error(LPX_ERR_INTERNAL, "SHA-256 is not available from libcrypto");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id = "key-";
  for (unsigned i = 0; i < 4; ++i) {
    id += kHex[digest[i] >> 4];
    id += kHex[digest[i] & 15];
  }
  return id;
}

ApiKey parse_key_line(std::string_view line) {
  ApiKey key;
  std::size_t at = 0;
  bool first = true;
  while (at < line.size()) {
    const std::size_t begin = line.find_first_not_of(" \t\r", at);
    if (begin == std::string_view::npos) break;
    const std::size_t end = std::min(line.find_first_of(" \t\r", begin), line.size());
    const std::string_view word = line.substr(begin, end - begin);
    at = end;
    if (first) {
      key.secret = std::string(word);
      first = false;
      continue;
    }
    const std::size_t equals = word.find('=');
    const std::string_view name = word.substr(0, equals);
    const std::string_view value = equals == std::string_view::npos ? "" : word.substr(equals + 1);
    if (equals == std::string_view::npos || value.empty()) {
      throw Error(LPX_ERR_INVALID_ARGUMENT, "after the key, fields are id=NAME, rpm=N or tpm=N");
    }
    if (name == "id") {
      key.id = std::string(value);
    } else if (name == "rpm") {
      key.limits.requests_per_minute = positive_number<std::uint32_t>("rpm", value);
    } else if (name == "tpm") {
      key.limits.tokens_per_minute = positive_number<std::uint64_t>("tpm", value);
    } else {
      throw Error(LPX_ERR_INVALID_ARGUMENT,
                  "unknown field '" + std::string(name) + "' (id=NAME, rpm=N or tpm=N)");
    }
  }
  if (key.secret.empty()) throw Error(LPX_ERR_INVALID_ARGUMENT, "no key");
  if (key.id.empty()) key.id = default_key_id(key.secret);
  return key;
}

const ApiKey* ApiKeys::find(std::string_view authorization) const noexcept {
  constexpr std::string_view kScheme = "Bearer ";
  if (authorization.size() <= kScheme.size() ||
      !constant_time_equal(authorization.substr(0, kScheme.size()), kScheme)) {
    return nullptr;
  }
  return find_key(authorization.substr(kScheme.size()));
}

const ApiKey* ApiKeys::find_in_websocket_protocols(std::string_view offered) const noexcept {
  const ApiKey* found = nullptr;
  any_websocket_protocol(offered, [&](std::string_view token) {
    if (token.size() <= kApiKeyProtocolPrefix.size() ||
        token.substr(0, kApiKeyProtocolPrefix.size()) != kApiKeyProtocolPrefix) {
      return false;
    }
    found = find_key(token.substr(kApiKeyProtocolPrefix.size()));
    return found != nullptr;
  });
  return found;
}

const ApiKey* ApiKeys::find_key(std::string_view given) const noexcept {
  const ApiKey* found = nullptr;
  for (const ApiKey& key : keys_) {  // every key compared: no early exit
    if (constant_time_equal(key.secret, given)) found = &key;
  }
  return found;
}

}  // namespace lpx::http
