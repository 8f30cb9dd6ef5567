// Python's two string formatting languages: str.format ("{} and {name}") and printf-style
// "%s - %05.1f" % args (also what Jinja's `format` filter uses).
#pragma once

#include <string>
#include <string_view>

#include "chat_template/arguments.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

// "{0} {name!r}" with positional and keyword arguments; format specs after ':' are limited to
// fill/align/width/precision for strings and numbers.
std::string python_str_format(std::string_view format, const CallArguments& arguments);

// format % arguments: `arguments` is a tuple (several values), a dict (for %(name)s) or one value.
std::string python_percent_format(std::string_view format, const Value& arguments);

}  // namespace lpx::core::jinja
