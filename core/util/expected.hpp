// Value-or-error results: tl::expected (Debian's libexpected-dev) until the toolchain has
// std::expected (C++23). The error is a Status (util/status.hpp): what kind of failure, its
// message with context, and the field it is about; code that needs only a message states
// Expected<T, std::string>.
#pragma once

#include <utility>

#include <tl/expected.hpp>

#include "util/status.hpp"

namespace lpx::core {

template <class T, class E = Status>
using Expected = tl::expected<T, E>;

template <class E>
auto unexpected(E&& error) {
  return tl::make_unexpected(std::forward<E>(error));
}

}  // namespace lpx::core
