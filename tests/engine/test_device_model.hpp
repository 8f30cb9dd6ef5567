// What the test-device backend's model answers (tests/test_plugins/test_device_backend.cpp):
// next = (sum of the sequence's tokens + 1) mod n_vocab, read back through the block tables
// the engine sends, so a wrong table, position, row or fed token changes the tokens.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace lpx::test {

inline constexpr std::int64_t kTestDeviceVocab = 32000;  // the tiny llama's

// The `n` tokens greedy decoding of `prompt` gives.
inline std::vector<std::int32_t> expected_tokens(const std::vector<std::int32_t>& prompt,
                                                 std::size_t n) {
  std::int64_t sum = 0;
  for (std::int32_t t : prompt) sum += t;
  std::vector<std::int32_t> out;
  for (std::size_t i = 0; i < n; ++i) {
    const auto next = static_cast<std::int32_t>((sum + 1) % kTestDeviceVocab);
    out.push_back(next);
    sum += next;
  }
  return out;
}

// A prompt of ordinary tokens (ids 100..999), different for each seed.
inline std::vector<std::int32_t> prompt_of(std::size_t length, std::int32_t seed) {
  std::vector<std::int32_t> p;
  for (std::size_t i = 0; i < length; ++i) {
    const std::int64_t id = 100 + (seed * 7919 + static_cast<std::int64_t>(i) * 31) % 900;
    p.push_back(static_cast<std::int32_t>(id));
  }
  return p;
}

}  // namespace lpx::test
