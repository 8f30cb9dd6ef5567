// Hard caps on the values a template can build. Templates are untrusted input: these keep a
// hostile template from exhausting memory through string or list growth (e.g. 'x' * 10**12) or
// from nesting values deep enough to overflow the stack when they are printed or compared.
// The per-render budgets (output size, loop iterations, call depth) are in RenderOptions.
#pragma once

#include <cstddef>
#include <string>

#include "chat_template/template_error.hpp"

namespace lpx::core::jinja {

inline constexpr std::size_t kMaxStringBytes = std::size_t{64} << 20;  // one string value
inline constexpr std::size_t kMaxListItems = std::size_t{1} << 22;     // one list or dict
inline constexpr int kMaxValueDepth = 256;  // nesting of lists/dicts (JSON input included)
inline constexpr int kMaxParseDepth = 128;  // nesting of expressions and blocks in the source

inline void require_string_size(std::size_t bytes) {
  if (bytes > kMaxStringBytes) {
    fail("string too long (" + std::to_string(bytes) + " bytes; the limit is " +
         std::to_string(kMaxStringBytes) + ")");
  }
}

inline void require_list_size(std::size_t items) {
  if (items > kMaxListItems) {
    fail("sequence too long (" + std::to_string(items) + " items; the limit is " +
         std::to_string(kMaxListItems) + ")");
  }
}

inline void require_value_depth(int depth) {
  if (depth > kMaxValueDepth) {
    fail("value nested deeper than " + std::to_string(kMaxValueDepth) + " levels");
  }
}

}  // namespace lpx::core::jinja
