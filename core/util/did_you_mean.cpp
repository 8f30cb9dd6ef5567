#include "util/did_you_mean.hpp"

#include <algorithm>

namespace lpx::core {
namespace {

// Optimal string alignment distance: insertions, deletions, substitutions and adjacent
// transpositions ("nmae" -> "name") each cost 1.
size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t width = b.size() + 1;
  std::vector<size_t> d((a.size() + 1) * width);
  for (size_t i = 0; i <= a.size(); ++i) d[i * width] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      size_t best = std::min({d[(i - 1) * width + j] + 1, d[i * width + j - 1] + 1,
                              d[(i - 1) * width + j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        best = std::min(best, d[(i - 2) * width + j - 2] + 1);
      }
      d[i * width + j] = best;
    }
  }
  return d[a.size() * width + b.size()];
}

}  // namespace

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  const size_t limit = std::clamp<size_t>(word.size() / 3, 1, 3);
  std::string best;
  size_t best_distance = limit + 1;
  for (const std::string& candidate : candidates) {
    size_t d = edit_distance(word, candidate);
    if (d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string match = closest_match(word, candidates);
  return match.empty() ? std::string() : " (did you mean '" + match + "'?)";
}

std::string join_or_none(const std::vector<std::string>& items) {
  if (items.empty()) return "none";
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += ", ";
    out += item;
  }
  return out;
}

}  // namespace lpx::core
