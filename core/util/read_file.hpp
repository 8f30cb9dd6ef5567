// A whole file as bytes, or an error that names it.
#pragma once

#include <string>

#include "util/expected.hpp"

namespace lpx::core {

// The contents of `path`; on failure "PATH: cannot be read".
Expected<std::string> read_whole_file(const std::string& path);

}  // namespace lpx::core
