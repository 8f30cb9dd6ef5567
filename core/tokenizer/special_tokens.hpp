// Splitting input text around special tokens before the model's own tokenization. Internal to
// lpx_tokenizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <span>
#include <vector>

#include "tokenizer/tokenizer_tables.hpp"

namespace lpx::core::detail {

struct Fragment {
  std::int32_t token;  // a special token, or -1 for text
  std::size_t offset;  // text: where it starts in the input
  std::size_t length;
};

// Splits `text` into text and special-token fragments, in order. As llama.cpp does it: special
// tokens are taken longest first; each one is found left to right, without overlap, in every text
// fragment still left. User-defined tokens always count; control and unknown tokens only when
// `parse_special`. A token marked lstrip/rstrip also removes the ASCII whitespace before/after it.
// Builds `index` for the special tokens an encode mode matches.
void build_special_index(const TokenizerTables& tables, bool parse_special, SpecialTokenIndex& index);

void partition_special(const TokenizerTables& tables, std::string_view text, bool parse_special,
                       std::vector<Fragment>& out);

}  // namespace lpx::core::detail
