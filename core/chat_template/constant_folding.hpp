// Jinja2 evaluates expressions that need no variables while it compiles a template, and keeps the
// result where Python can write it back as a literal; a {{ }} whose whole expression is constant
// is printed then. That evaluation looks items up the forgiving way, so `{{ 5[1:] }}` prints
// nothing where `{{ n[1:] }}` with n = 5 is an error at render time. This pass does the same
// folding right after parsing, so such corner cases render exactly as in Jinja.
#pragma once

#include "chat_template/ast.hpp"
#include "chat_template/value.hpp"

namespace lpx::core::jinja {

// Sets Expression::folded and OutputStatement::folded_text throughout the template.
void fold_constants(const Body& body);

// Python's has_safe_repr: the values Jinja keeps as folded constants.
bool can_fold_to(const Value& value, int depth = 0);

}  // namespace lpx::core::jinja
