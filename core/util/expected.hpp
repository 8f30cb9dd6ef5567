// Value-or-error results: tl::expected (Debian's libexpected-dev) until the toolchain has
// std::expected (C++23), with the core's defaults. The error is a message with its context
// unless a function states more: Expected<T, Status> carries the failure's code and field too
// (util/status.hpp).
#pragma once

#include <string>
#include <utility>

#include <tl/expected.hpp>

#include "util/status.hpp"

namespace lpx::core {

template <class T, class E = std::string>
using Expected = tl::expected<T, E>;

template <class E>
auto unexpected(E&& error) {
  return tl::make_unexpected(std::forward<E>(error));
}

}  // namespace lpx::core
