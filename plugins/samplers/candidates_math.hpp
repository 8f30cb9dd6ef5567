// Shared by the sampler plugins (compiled into each): ordering and softmax over a candidate list.
// Everything works in place on the caller's buffer: no allocation on the decode path.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <lpx/kinds/sampler.h>

namespace lpx::samplers {

inline bool by_logit_descending(const lpx_token_candidate& a, const lpx_token_candidate& b) {
  return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

// Sorts by descending logit (ties: lower id first) unless already sorted.
inline void sort_descending(lpx_candidates& c) {
  if (c.sorted) return;
  std::sort(c.data, c.data + c.size, by_logit_descending);
  c.sorted = 1;
  c.selected = -1;
}

// Keeps the `k` best candidates, in descending order.
inline void keep_top(lpx_candidates& c, std::size_t k) {
  if (k >= c.size) {
    sort_descending(c);
    return;
  }
  if (!c.sorted) {
    std::partial_sort(c.data, c.data + k, c.data + c.size, by_logit_descending);
    c.sorted = 1;
  }
  c.size = k;
  c.selected = -1;
}

// Sorts, then sets every p to the softmax of the logits (computed in double for stability).
inline void softmax(lpx_candidates& c) {
  sort_descending(c);
  if (c.size == 0) return;
  const double max = c.data[0].logit;
  double sum = 0;
  for (std::size_t i = 0; i < c.size; ++i) sum += std::exp(static_cast<double>(c.data[i].logit) - max);
  for (std::size_t i = 0; i < c.size; ++i) {
    c.data[i].p = static_cast<float>(std::exp(static_cast<double>(c.data[i].logit) - max) / sum);
  }
  c.has_probabilities = 1;
}

}  // namespace lpx::samplers
