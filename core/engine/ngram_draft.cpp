#include "engine/ngram_draft.hpp"

namespace lpx::core {

void ngram_draft(const std::vector<std::int32_t>& context, std::int32_t next, std::uint32_t ngram,
                 std::uint32_t max_draft, std::vector<std::int32_t>& draft) {
  draft.clear();
  // The text is context followed by next; at(i) reads it without copying.
  const std::size_t size = context.size() + 1;
  const std::size_t n = ngram;
  if (n == 0 || max_draft == 0 || size <= n) return;
  const auto at = [&](std::size_t i) { return i < context.size() ? context[i] : next; };
  // Latest start s < size - n whose n tokens equal the last n, with a token after it.
  for (std::size_t s = size - n; s-- > 0;) {
    std::size_t k = 0;
    while (k < n && at(s + k) == at(size - n + k)) ++k;
    if (k < n) continue;
    for (std::size_t f = s + n; f < size && draft.size() < max_draft; ++f) draft.push_back(at(f));
    return;
  }
}

}  // namespace lpx::core
