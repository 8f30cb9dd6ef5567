// Jinja2's filters (`value | name(arguments)`), with the Hugging Face tojson.
#pragma once

#include <string_view>

#include "chat_template/arguments.hpp"

namespace lpx::core::jinja {

FilterFunction find_filter(std::string_view name);  // nullptr when this engine has no such filter
// A filter Jinja2 has but this engine does not (reported as "unsupported" rather than "unknown").
bool is_unsupported_jinja_filter(std::string_view name);
// Filters Jinja passes the render context to (they look up other filters and tests by name);
// Jinja never evaluates them while compiling.
bool filter_needs_context(std::string_view name);

}  // namespace lpx::core::jinja
