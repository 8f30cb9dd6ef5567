// "Did you mean ...?" suggestions for misspelt keys and plugin names.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace lpx::core {

// The candidate closest to `word` by edit distance, or "" when none is plausibly meant
// (distance greater than a third of the word's length, at least 1, at most 3).
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "".
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

// "a, b, c", or "none" for an empty list.
std::string join_or_none(const std::vector<std::string>& items);

}  // namespace lpx::core
