// Jinja2's tests (`value is name(arguments)`).
#pragma once

#include <string_view>

#include "chat_template/arguments.hpp"

namespace lpx::core::jinja {

TestFunction find_test(std::string_view name);  // nullptr when this engine has no such test
bool is_unsupported_jinja_test(std::string_view name);

}  // namespace lpx::core::jinja
