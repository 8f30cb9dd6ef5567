// The methods of Python's str, dict and list that templates call, e.g. content.strip(),
// message.get('tool_calls'), text.split('\n'). Methods that would mutate (list.append,
// dict.update...) are refused, as in the ImmutableSandboxedEnvironment.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "chat_template/arguments.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

enum class MethodLookup { kNone, kMethod, kUnsafe };
// Whether `self.name` is a method this engine implements, a mutating method the sandbox refuses,
// or neither.
MethodLookup find_method(const Value& self, std::string_view name);
Value call_method(const Value& self, std::string_view name, const CallArguments& arguments);

// A method bound to its object (what `text.upper` evaluates to before it is called).
Value bound_method(const Value& self, std::string_view name);

// The Python string helpers the filters share with the methods.
std::string python_strip(std::string_view text, const Value* chars, bool left, bool right);
ValueList python_split(std::string_view text, const Value* separator, std::int64_t max_split);
std::string python_replace(std::string_view text, std::string_view old_text,
                           std::string_view new_text, std::int64_t count);
std::string python_capitalize(std::string_view text);
std::string python_title(std::string_view text);  // str.title(): "they're" -> "They'Re"

}  // namespace lpx::core::jinja
