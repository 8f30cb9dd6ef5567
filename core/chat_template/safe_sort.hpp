// A stable merge sort that stays memory-safe whatever the comparator does. std::sort and
// std::stable_sort need a strict weak ordering and may misbehave without one; a template can
// sort NaNs or throw halfway (mixed types), so sorting template values goes through this.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace lpx::core::jinja {

template <class T, class Less>
void safe_stable_sort(std::vector<T>& items, Less less) {
  const std::size_t size = items.size();
  std::vector<T> merged;
  merged.reserve(size);
  for (std::size_t width = 1; width < size; width *= 2) {
    merged.clear();
    for (std::size_t low = 0; low < size; low += 2 * width) {
      const std::size_t middle = std::min(low + width, size);
      const std::size_t high = std::min(low + 2 * width, size);
      std::size_t left = low;
      std::size_t right = middle;
      while (left < middle && right < high) {
        // Take from the right run only when strictly smaller: equal items keep their order.
        if (less(items[right], items[left])) {
          merged.push_back(items[right++]);
        } else {
          merged.push_back(items[left++]);
        }
      }
      while (left < middle) merged.push_back(items[left++]);
      while (right < high) merged.push_back(items[right++]);
    }
    items.swap(merged);
  }
}

}  // namespace lpx::core::jinja
