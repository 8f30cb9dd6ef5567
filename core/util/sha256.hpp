// SHA-256 as lowercase hex (OpenSSL's libcrypto): of bytes in memory, or of a file streamed in
// 1 MiB reads. For records of which model ran and for tests that pin bytes.
#pragma once

#include <cstddef>
#include <string>

#include "util/expected.hpp"

namespace lpx::core {

std::string sha256_hex(const void* data, std::size_t size);
// An error naming the file when it cannot be read.
Expected<std::string> sha256_file(const std::string& path);

}  // namespace lpx::core
