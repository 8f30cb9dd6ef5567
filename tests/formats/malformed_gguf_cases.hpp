// Malformed GGUF files, each broken in one stated way, with a part of the error it must cause.
// Shared by the parser tests and the `lpx-pipeline inspect` tests.
#pragma once

#include <cstdint>
#include <vector>

namespace lpx::test {

struct MalformedGguf {
  const char* name;
  std::vector<std::uint8_t> (*make)();
  const char* expected;  // a part of the error message
};

const std::vector<MalformedGguf>& malformed_gguf_cases();

}  // namespace lpx::test
