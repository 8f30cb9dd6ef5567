// Malformed .safetensors files, each broken in one stated way, with a part of the error it must
// cause. Shared by the parser tests and the fuzzer's seed corpus.
#pragma once

#include <cstdint>
#include <vector>

namespace lpx::test {

struct MalformedSafetensors {
  const char* name;
  std::vector<std::uint8_t> bytes;
  const char* expected;  // a part of the error message
};

std::vector<MalformedSafetensors> malformed_safetensors_cases();

}  // namespace lpx::test
