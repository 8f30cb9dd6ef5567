// Jinja2 decides where each variable lives when it compiles a template, not while it runs. In a
// block with its own scope (the template, a loop body, a macro, `with`, a block `set`, a filter
// block), a name that the block assigns before reading it, and that no enclosing block mentions,
// starts out undefined in that block, even if the render context has it:
//
//   {% for m in messages %}{{ system }}{% endfor %}{% set system = 'x' %}  -> prints nothing
//
// This pass finds those names so the renderer can declare them undefined when it enters each
// block, which makes it agree with Jinja2 in these corner cases too.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "chat_template/ast.hpp"

namespace lpx::core::jinja {

// For each block body that has its own scope: the names that start out undefined in it.
using BlockLocals = std::unordered_map<const Body*, std::vector<std::string>>;

BlockLocals analyze_block_locals(const Body& template_body);

}  // namespace lpx::core::jinja
