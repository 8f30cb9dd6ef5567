#include "tokenizer/special_tokens.hpp"

namespace lpx::core::detail {
namespace {

bool is_ascii_space(char c) noexcept {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Replaces each text fragment of `in` by the pieces around the occurrences of `token` in it.
// `occurrences`: every start of the token's text in the input, ascending (overlaps included).
// Matches are taken left to right without overlap, inside one fragment each, exactly as a
// repeated find() over each fragment would take them.
void split_on(const TokenizerTables& tables, std::string_view text, std::int32_t token,
              std::span<const std::size_t> occurrences, const std::vector<Fragment>& in,
              std::vector<Fragment>& out) {
  const std::size_t size = tables.vocabulary.tokens[static_cast<std::size_t>(token)].size();
  const std::uint16_t attr = tables.attrs[static_cast<std::size_t>(token)];
  std::size_t next = 0;  // first occurrence not yet passed
  out.clear();
  for (const Fragment& fragment : in) {
    if (fragment.token >= 0) {
      out.push_back(fragment);
      continue;
    }
    std::size_t base = fragment.offset;
    std::size_t length = fragment.length;
    while (length > 0) {
      while (next < occurrences.size() && occurrences[next] < base) ++next;
      if (next == occurrences.size() || occurrences[next] + size > base + length) break;
      const std::size_t match = occurrences[next];
      std::size_t left_length = match - base;
      if (attr & kAttrLstrip) {
        while (left_length > 0 && is_ascii_space(text[base + left_length - 1])) --left_length;
      }
      if (left_length > 0) out.push_back(Fragment{-1, base, left_length});
      out.push_back(Fragment{token, match, size});
      std::size_t right = match + size;
      std::size_t right_length = base + length - right;
      if (attr & kAttrRstrip) {
        while (right_length > 0 && is_ascii_space(text[right])) {
          ++right;
          --right_length;
        }
      }
      base = right;
      length = right_length;
    }
    if (length > 0) out.push_back(Fragment{-1, base, length});
  }
}

}  // namespace

void build_special_index(const TokenizerTables& tables, bool parse_special, SpecialTokenIndex& index) {
  index.tokens.clear();
  index.root.fill(-1);
  index.edges.clear();
  index.terminal.assign(1, -1);  // node 0 stands for "before the first byte" (unused)
  for (const std::int32_t token : tables.special_tokens) {
    const std::uint16_t attr = tables.attrs[static_cast<std::size_t>(token)];
    if (!parse_special && (attr & (kAttrControl | kAttrUnknown))) continue;
    const auto position = static_cast<std::int32_t>(index.tokens.size());
    index.tokens.push_back(token);
    const std::string& text = tables.vocabulary.tokens[static_cast<std::size_t>(token)];
    std::int32_t node = -1;
    for (std::size_t k = 0; k < text.size(); ++k) {
      const auto byte = static_cast<std::uint8_t>(text[k]);
      std::int32_t* child = nullptr;
      std::int32_t slot = -1;
      if (k == 0) {
        child = &index.root[byte];
      } else {
        const auto key = (static_cast<std::uint64_t>(node) << 8) | byte;
        const auto it = index.edges.find(key);
        if (it != index.edges.end()) slot = it->second;
        child = &slot;
        if (slot < 0) {
          slot = static_cast<std::int32_t>(index.terminal.size());
          index.terminal.push_back(-1);
          index.edges.emplace(key, slot);
        }
      }
      if (*child < 0) {
        *child = static_cast<std::int32_t>(index.terminal.size());
        index.terminal.push_back(-1);
      }
      node = *child;
    }
    // Texts are unique, so no two tokens end at the same node.
    index.terminal[static_cast<std::size_t>(node)] = position;
  }
}

void partition_special(const TokenizerTables& tables, std::string_view text, bool parse_special,
                       std::vector<Fragment>& out) {
  out.clear();
  if (text.empty()) return;
  out.push_back(Fragment{-1, 0, text.size()});
  const SpecialTokenIndex& index = parse_special ? tables.special_index : tables.plain_index;
  if (index.tokens.empty()) return;

  // Every occurrence of every token, found in one pass, then grouped by token.
  std::vector<std::pair<std::int32_t, std::size_t>> found;  // (position in tokens, offset)
  for (std::size_t at = 0; at < text.size(); ++at) {
    std::int32_t node = index.root[static_cast<std::uint8_t>(text[at])];
    for (std::size_t k = at + 1; node >= 0; ++k) {
      if (index.terminal[static_cast<std::size_t>(node)] >= 0) {
        found.emplace_back(index.terminal[static_cast<std::size_t>(node)], at);
      }
      if (k == text.size()) break;
      const auto it = index.edges.find((static_cast<std::uint64_t>(node) << 8) |
                                       static_cast<std::uint8_t>(text[k]));
      node = it == index.edges.end() ? -1 : it->second;
    }
  }
  if (found.empty()) return;
  std::vector<std::size_t> start(index.tokens.size() + 1, 0);
  for (const auto& [position, offset] : found) ++start[static_cast<std::size_t>(position) + 1];
  for (std::size_t k = 1; k < start.size(); ++k) start[k] += start[k - 1];
  std::vector<std::size_t> offsets(found.size());
  std::vector<std::size_t> fill(start.begin(), start.end() - 1);
  for (const auto& [position, offset] : found) offsets[fill[static_cast<std::size_t>(position)]++] = offset;

  std::vector<Fragment> next;
  for (std::size_t position = 0; position < index.tokens.size(); ++position) {
    if (start[position] == start[position + 1]) continue;
    const std::span<const std::size_t> occurrences(offsets.data() + start[position],
                                                   start[position + 1] - start[position]);
    split_on(tables, text, index.tokens[position], occurrences, out, next);
    out.swap(next);
  }
}

}  // namespace lpx::core::detail
