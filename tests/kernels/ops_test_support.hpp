// Shared helpers of the decode-step kernel tests: seeded random data that is never all zero,
// a paged f16 KV cache with a shuffled block table, and bit-exact comparison.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "lpx/kinds/quant_backend.h"
#include "reference/half_precision.hpp"

namespace lpx::kernels::ops_test {

class Random {
 public:
  explicit Random(std::uint32_t seed) : engine_(seed) {}

  // n normal floats with standard deviation `scale`; element 0 is never zero.
  std::vector<float> normal(std::size_t n, float scale) {
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> values(n);
    for (float& v : values) v = dist(engine_);
    if (n > 0 && values[0] == 0.0f) values[0] = scale;
    return values;
  }

  std::uint32_t below(std::uint32_t bound) {
    return std::uniform_int_distribution<std::uint32_t>(0, bound - 1)(engine_);
  }

  float uniform(float lo, float hi) {
    return std::uniform_real_distribution<float>(lo, hi)(engine_);
  }

  std::mt19937& engine() { return engine_; }

 private:
  std::mt19937 engine_;
};

// A sequence's K and V for positions [0, positions) in paged pools. Blocks are handed out in a
// shuffled order with spare blocks in between; every slot no position owns holds NaN, so a
// kernel that reads outside the sequence poisons its output.
struct PagedCache {
  std::uint32_t n_kv_heads;
  std::uint32_t head_dim;
  std::uint32_t block_size;
  std::vector<std::int32_t> block_table;
  std::vector<std::uint16_t> k;
  std::vector<std::uint16_t> v;

  PagedCache(Random& random, std::uint32_t positions, std::uint32_t kv_heads, std::uint32_t dim,
             std::uint32_t block)
      : n_kv_heads(kv_heads), head_dim(dim), block_size(block) {
    const std::uint32_t blocks = (positions + block - 1) / block;
    const std::uint32_t pool_blocks = 2 * blocks + 1;
    std::vector<std::int32_t> order(pool_blocks);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), random.engine());
    block_table.assign(order.begin(), order.begin() + blocks);
    const std::size_t slot_elements = std::size_t{kv_heads} * dim;
    k.assign(std::size_t{pool_blocks} * block * slot_elements, kNaN);
    v.assign(k.size(), kNaN);
    for (std::uint32_t t = 0; t < positions; ++t) {
      const std::vector<float> kt = random.normal(slot_elements, 1.5f);
      const std::vector<float> vt = random.normal(slot_elements, 1.0f);
      const std::size_t base = slot(t) * slot_elements;
      for (std::size_t i = 0; i < slot_elements; ++i) {
        k[base + i] = reference::f32_to_f16(kt[i]);
        v[base + i] = reference::f32_to_f16(vt[i]);
      }
    }
  }

  std::size_t slot(std::uint32_t t) const {
    return static_cast<std::size_t>(block_table[t / block_size]) * block_size + t % block_size;
  }

  // Element d of kv head h at position t.
  std::uint16_t& k_at(std::uint32_t t, std::uint32_t h, std::uint32_t d) {
    return k[(slot(t) * n_kv_heads + h) * head_dim + d];
  }
  std::uint16_t& v_at(std::uint32_t t, std::uint32_t h, std::uint32_t d) {
    return v[(slot(t) * n_kv_heads + h) * head_dim + d];
  }

  static constexpr std::uint16_t kNaN = 0x7E00;
};

// Arguments for an attention call over `cache`; q, out and positions stay owned by the caller.
inline lpx_attention_args attention_args(const PagedCache& cache, const std::vector<float>& q,
                                         std::vector<float>& out,
                                         const std::vector<std::int32_t>& positions,
                                         std::uint32_t n_heads) {
  lpx_attention_args args{};
  args.struct_size = sizeof args;
  args.q = q.data();
  args.out = out.data();
  args.positions = positions.data();
  args.n_rows = static_cast<std::uint32_t>(positions.size());
  args.n_heads = n_heads;
  args.n_kv_heads = cache.n_kv_heads;
  args.head_dim = cache.head_dim;
  args.scale = 1.0f / static_cast<float>(std::sqrt(static_cast<double>(cache.head_dim)));
  args.k_cache = cache.k.data();
  args.v_cache = cache.v.data();
  args.block_table = cache.block_table.data();
  args.block_size = cache.block_size;
  return args;
}

// Bit-for-bit equality of two float arrays, reporting the first difference.
inline ::testing::AssertionResult same_bits(const std::vector<float>& expected,
                                            const std::vector<float>& actual) {
  if (expected.size() != actual.size()) {
    return ::testing::AssertionFailure()
           << "sizes differ: " << expected.size() << " vs " << actual.size();
  }
  std::size_t differing = 0;
  std::size_t first = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (std::bit_cast<std::uint32_t>(expected[i]) != std::bit_cast<std::uint32_t>(actual[i])) {
      if (differing++ == 0) first = i;
    }
  }
  if (differing == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << differing << " of " << expected.size() << " values differ; first at " << first
         << ": expected " << expected[first] << " got " << actual[first];
}

}  // namespace lpx::kernels::ops_test
