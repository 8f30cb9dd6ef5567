// Builds a string from pieces with one allocation. Used for messages instead of chains of
// `"literal" + std::string(...)`, which g++ 12 at -O3 flags with a false -Wrestrict warning
// (GCC bug 105329) that -Werror turns into a build failure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace lpx::core::jinja {

template <class... Parts>
std::string cat(const Parts&... parts) {
  const std::string_view views[] = {std::string_view(parts)...};
  std::size_t size = 0;
  for (std::string_view view : views) size += view.size();
  std::string result;
  result.reserve(size);
  for (std::string_view view : views) result.append(view);
  return result;
}

}  // namespace lpx::core::jinja
