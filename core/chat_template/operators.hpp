// Python's operators and Jinja2's attribute/item access, on template values. All of them throw
// TemplateError with Python's wording (e.g. "unsupported operand type(s) for +: 'int' and
// 'str'"), and using an undefined value reports why it is undefined.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "chat_template/ast.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

Value binary_operation(BinaryOp op, const Value& left, const Value& right);  // not `and`/`or`
Value unary_operation(UnaryOp op, const Value& operand);
bool chain_comparison(ChainOp op, const Value& left, const Value& right);
bool contains(const Value& container, const Value& item);  // Python's `item in container`

// `object.name`: an attribute (or method) first, then an item (Jinja's getattr).
Value get_attribute(const Value& object, std::string_view name);
// `object[key]`: an item first, then an attribute when the key is a string (Jinja's getitem).
Value get_item(const Value& object, const Value& key);
// `object[start:stop:step]`; null pointers are omitted parts.
Value get_slice(const Value& object, const Value* start, const Value* stop, const Value* step);

ValueList iterate(const Value& value);  // list items, dict keys, string characters; undefined: none
std::size_t length(const Value& value);  // Python's len()

// "'dict object'" / "'None'": how Jinja names a value in "has no attribute" messages.
std::string describe_for_lookup(const Value& value);

// Unpacks `value` into exactly `count` values (for `a, b = ...` and `for a, b in ...`).
ValueList unpack(const Value& value, std::size_t count);

}  // namespace lpx::core::jinja
