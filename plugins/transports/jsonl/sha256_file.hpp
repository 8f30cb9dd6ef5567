// SHA-256 of a file, as lowercase hex (OpenSSL's libcrypto): for the run record that says which
// input and which model a batch job used.
#pragma once

#include <string>

namespace lpx::batch {

// Throws lpx::Error naming the file when it cannot be read.
std::string sha256_file(const std::string& path);

}  // namespace lpx::batch
