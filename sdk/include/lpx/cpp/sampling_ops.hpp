// The standard sampling operations on a candidate list, one implementation shared by the
// sampler plugins (plugins/samplers, one operation each) and by sampling programs
// (sampling_program.hpp), the ground truth a device sampler is tested against. Header-only and
// allocation-free: everything works in place on the caller's buffer.
//
// Order: descending logit, equal logits by ascending id. Every filter keeps a prefix of it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>

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

// T > 0 divides the logits by T; T = 0 keeps only the most likely token.
inline void apply_temperature(lpx_candidates& c, float temperature) {
  c.has_probabilities = 0;
  if (temperature > 0) {
    for (std::size_t i = 0; i < c.size; ++i) c.data[i].logit /= temperature;
    return;
  }
  keep_top(c, c.size == 0 ? 0 : 1);
}

// Keeps the k most likely tokens; k = 0 keeps all.
inline void apply_top_k(lpx_candidates& c, std::size_t k) {
  if (k == 0) return;
  keep_top(c, k);
  c.has_probabilities = 0;
}

// Keeps the most likely tokens whose probabilities add up to at least p (and min_keep).
inline void apply_top_p(lpx_candidates& c, double p, std::size_t min_keep) {
  if (p >= 1.0 || c.size == 0) return;
  softmax(c);
  double cumulative = 0;
  std::size_t keep = c.size;
  for (std::size_t i = 0; i < c.size; ++i) {
    cumulative += static_cast<double>(c.data[i].p);
    if (cumulative >= p && i + 1 >= min_keep) {
      keep = i + 1;
      break;
    }
  }
  c.size = keep;
  c.selected = -1;
  c.has_probabilities = 0;  // the kept probabilities no longer sum to 1
}

// Keeps the tokens at least p times as likely as the most likely one (and min_keep).
inline void apply_min_p(lpx_candidates& c, double p, std::size_t min_keep) {
  if (p <= 0.0 || c.size == 0) return;
  sort_descending(c);
  // p_i >= p * p_max  <=>  logit_i >= logit_max + log(p): no softmax needed.
  const double threshold = static_cast<double>(c.data[0].logit) + std::log(p);
  std::size_t keep = 0;
  while (keep < c.size && static_cast<double>(c.data[keep].logit) >= threshold) ++keep;
  c.size = std::max(keep, std::min(min_keep, c.size));
  c.selected = -1;
  c.has_probabilities = 0;
}

// Selects the most likely token (the first on ties). False when there is nothing to pick.
inline bool select_greedy(lpx_candidates& c) {
  if (c.size == 0) return false;
  if (c.sorted) {  // already in descending order: the first is the best
    c.selected = 0;
    return true;
  }
  std::size_t best = 0;
  for (std::size_t i = 1; i < c.size; ++i) {
    if (c.data[i].logit > c.data[best].logit) best = i;
  }
  c.selected = static_cast<std::int64_t>(best);
  return true;
}

// Selects a token in proportion to its probability; `uniform` in [0, 1) is the draw. False
// when there is nothing to pick.
inline bool select_by_probability(lpx_candidates& c, double uniform) {
  if (c.size == 0) return false;
  softmax(c);
  double sum = 0;
  for (std::size_t i = 0; i < c.size; ++i) sum += static_cast<double>(c.data[i].p);
  const double target = uniform * sum;
  double cumulative = 0;
  std::size_t chosen = c.size - 1;  // rounding can leave target just above the last sum
  for (std::size_t i = 0; i < c.size; ++i) {
    cumulative += static_cast<double>(c.data[i].p);
    if (target < cumulative) {
      chosen = i;
      break;
    }
  }
  c.selected = static_cast<std::int64_t>(chosen);
  return true;
}

}  // namespace lpx::samplers
