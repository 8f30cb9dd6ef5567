// A minimal value-or-error type until the toolchain has std::expected (C++23).
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace lpx::core {

template <class E>
struct Unexpected {
  E error;
};
template <class E>
Unexpected<std::decay_t<E>> unexpected(E&& error) {
  return {std::forward<E>(error)};
}

// Holds either a T or an error E (a message by default). Access to the wrong side is a bug and
// asserts via std::get's exception.
template <class T, class E = std::string>
class Expected {
 public:
  Expected(T value) : data_(std::in_place_index<0>, std::move(value)) {}
  template <class U>
  Expected(Unexpected<U> error) : data_(std::in_place_index<1>, std::move(error.error)) {}

  bool has_value() const noexcept { return data_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  T& value() & { return std::get<0>(data_); }
  const T& value() const& { return std::get<0>(data_); }
  T&& value() && { return std::get<0>(std::move(data_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const E& error() const& { return std::get<1>(data_); }

 private:
  std::variant<T, E> data_;
};

}  // namespace lpx::core
