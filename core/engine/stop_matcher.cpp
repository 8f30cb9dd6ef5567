#include "engine/stop_matcher.hpp"

#include <algorithm>

namespace lpx::core {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
  std::size_t longest = 0;
  for (const std::string& s : stops_) longest = std::max(longest, s.size());
  pending_.reserve(longest + 64);
  released_.reserve(longest + 64);
}

StopMatcher::Result StopMatcher::push(std::string_view piece) {
  pending_.append(piece);
  released_.clear();
  if (stops_.empty()) {
    released_.swap(pending_);
    return {released_, false};
  }
  // The earliest complete stop string wins.
  std::size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, pending_.find(stop));
  if (first != std::string::npos) {
    released_.assign(pending_, 0, first);
    pending_.clear();
    return {released_, true};
  }
  // Hold back the longest tail that is a proper prefix of some stop string.
  std::size_t hold = 0;
  for (const std::string& stop : stops_) {
    const std::size_t max = std::min(stop.size() - 1, pending_.size());
    for (std::size_t n = max; n > hold; --n) {
      if (std::string_view(pending_).substr(pending_.size() - n) ==
          std::string_view(stop).substr(0, n)) {
        hold = n;
        break;
      }
    }
  }
  released_.assign(pending_, 0, pending_.size() - hold);
  pending_.erase(0, pending_.size() - hold);
  return {released_, false};
}

std::string_view StopMatcher::finish() {
  released_.clear();
  released_.swap(pending_);
  return released_;
}

}  // namespace lpx::core
