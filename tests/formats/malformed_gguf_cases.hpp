// Malformed GGUF files, each broken in one stated way, with a part of the error it must cause.
// Shared by the parser tests and the `lpx-pipeline inspect` tests.
#pragma once

#include <cstdint>
#include <vector>

#include "formats/gguf_builder.hpp"

namespace lpx::test {

struct MalformedGguf {
  const char* name;
  std::vector<std::uint8_t> (*make)();
  const char* expected;  // a part of the error message
};

const std::vector<MalformedGguf>& malformed_gguf_cases();

// The small valid file the cases start from.
GgufBuilder malformed_gguf_base();

}  // namespace lpx::test
