// Value-or-error results of the GGUF reader: tl::expected (Debian's libexpected-dev) with a
// message that names the file position and what is wrong there.
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

namespace lpx::gguf {

template <class T>
using Expected = tl::expected<T, std::string>;

template <class E>
auto unexpected(E&& error) {
  return tl::make_unexpected(std::forward<E>(error));
}

}  // namespace lpx::gguf
