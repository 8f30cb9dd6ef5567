// Arguments of a call, filter or test, and Python-style binding of them to parameters.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chat_template/value.hpp"

namespace lpx::core::jinja {

struct CallArguments {
  ValueList positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

// Filters and tests are looked up while parsing, so an unknown name is a parse error.
using FilterFunction = Value (*)(const Value& input, const CallArguments& arguments);
using TestFunction = bool (*)(const Value& input, const CallArguments& arguments);

// Binds arguments to named parameters the way Python does: positionals first, then keywords.
// Unknown keywords, surplus positionals and a parameter given twice are errors naming `callee`.
class Parameters {
 public:
  Parameters(std::string_view callee, const CallArguments& arguments,
             std::initializer_list<std::string_view> names);

  const Value* get(std::size_t index) const { return bound_[index]; }  // nullptr when not given
  bool has(std::size_t index) const { return bound_[index] != nullptr; }
  Value get_or(std::size_t index, Value fallback) const {
    return bound_[index] ? *bound_[index] : std::move(fallback);
  }

 private:
  std::vector<const Value*> bound_;
};

}  // namespace lpx::core::jinja
