// Automatic prefix caching without a model: the index (keys chained over parent and tokens,
// collisions that can only miss, removal, least-recently-used parking), the pool's reference
// counts (a block shared by several tables, eviction under pressure while other tables hold
// blocks, a cut into a shared block), and admission that maps a cached prompt prefix.
#include "engine/prefix_index.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/kv_cache.hpp"
#include "engine/scheduler.hpp"

namespace lpx::core {
namespace {

constexpr std::uint32_t kBlock = 4;

std::vector<std::int32_t> run(std::int32_t first, std::size_t n) {
  std::vector<std::int32_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

TEST(PrefixIndex, FindsAPrefixBlockByBlockAndOnlyThatPrefix) {
  PrefixIndex index(8, kBlock);
  const std::vector<std::int32_t> tokens = run(100, 8);
  const std::uint64_t k0 = index.key(PrefixIndex::kRoot, tokens.data());
  const std::uint64_t k1 = index.key(k0, tokens.data() + kBlock);
  ASSERT_TRUE(index.add(3, k0, PrefixIndex::kRoot, tokens.data()));
  ASSERT_TRUE(index.add(5, k1, k0, tokens.data() + kBlock));
  EXPECT_EQ(index.find(k0, PrefixIndex::kRoot, tokens.data()), 3);
  EXPECT_EQ(index.find(k1, k0, tokens.data() + kBlock), 5);
  // The same second block after another first block is another prefix.
  const std::vector<std::int32_t> other = run(200, kBlock);
  EXPECT_EQ(index.find(index.key(index.key(PrefixIndex::kRoot, other.data()), tokens.data() + kBlock),
                       index.key(PrefixIndex::kRoot, other.data()), tokens.data() + kBlock),
            -1);
  // A key that matches with other tokens (a collision) is not a hit.
  EXPECT_EQ(index.find(k0, PrefixIndex::kRoot, other.data()), -1);
  EXPECT_FALSE(index.add(6, k0, PrefixIndex::kRoot, tokens.data())) << "that prefix is held by block 3";
  EXPECT_EQ(index.size(), 2u);
}

TEST(PrefixIndex, RemovalKeepsEveryOtherEntryFindable) {
  // Eight blocks in sixteen slots, with keys forced into one run of slots (same low bits) so
  // that removals must shift entries back.
  PrefixIndex index(8, kBlock);
  std::vector<std::vector<std::int32_t>> blocks;
  std::vector<std::uint64_t> keys;
  for (std::int32_t b = 0; b < 8; ++b) {
    blocks.push_back(run(b * 10, kBlock));
    keys.push_back((std::uint64_t(b) << 40) | 5);  // all home in slot 5
    ASSERT_TRUE(index.add(b, keys.back(), PrefixIndex::kRoot, blocks.back().data()));
  }
  for (std::int32_t gone : {0, 3, 6}) index.remove(gone);
  for (std::int32_t b = 0; b < 8; ++b) {
    const bool removed = b == 0 || b == 3 || b == 6;
    EXPECT_EQ(index.find(keys[b], PrefixIndex::kRoot, blocks[b].data()), removed ? -1 : b) << b;
    EXPECT_EQ(index.indexed(b), !removed);
  }
  EXPECT_EQ(index.size(), 5u);
}

TEST(PrefixIndex, ParkedBlocksAreEvictedOldestFirst) {
  PrefixIndex index(4, kBlock);
  for (std::int32_t b = 0; b < 3; ++b) {
    const auto t = run(b * 10, kBlock);
    index.add(b, index.key(PrefixIndex::kRoot, t.data()), PrefixIndex::kRoot, t.data());
  }
  index.park(0);
  index.park(1);
  index.park(2);
  index.unpark(0);  // held again: not evictable
  index.park(0);    // and let go again: now the most recent
  EXPECT_EQ(index.parked_count(), 3u);
  EXPECT_EQ(index.evict(), 1);
  EXPECT_EQ(index.evict(), 2);
  EXPECT_EQ(index.evict(), 0);
  EXPECT_EQ(index.evict(), -1);
  EXPECT_EQ(index.size(), 0u) << "evicted blocks are forgotten";
}

KvCacheShape shape(std::uint32_t n_blocks) {
  KvCacheShape s;
  s.n_layer = 1;
  s.n_kv_heads = 1;
  s.head_dim = 2;
  s.block_size = kBlock;
  s.n_blocks = n_blocks;
  s.host_storage = false;
  return s;
}

// A sequence that computed `tokens` and published its full blocks.
struct Computed {
  BlockTable table{64, kBlock};
  std::vector<std::int32_t> tokens;
  std::uint32_t published = 0;
  std::uint64_t key = PrefixIndex::kRoot;
};

void compute(KvCache& cache, Computed& s, const std::vector<std::int32_t>& tokens) {
  ASSERT_TRUE(cache.ensure(s.table, static_cast<std::uint32_t>(tokens.size())));
  s.tokens = tokens;
  cache.publish(s.table, s.tokens, s.tokens.size(), s.published, s.key);
}

TEST(KvCachePrefixes, ALaterTableMapsTheSameBlocksAndTheyOutliveTheirWriter) {
  KvCache cache(shape(8));
  const std::vector<std::int32_t> prompt = run(1, 10);  // two full blocks and a part
  Computed a;
  compute(cache, a, prompt);
  EXPECT_EQ(a.published, 2u) << "only full blocks are published";
  EXPECT_EQ(cache.cached_blocks(), 2u);
  const std::int32_t first = a.table.data()[0], second = a.table.data()[1];

  BlockTable b(64, kBlock);
  std::uint64_t key = 0;
  EXPECT_EQ(cache.map_cached_prefix(b, prompt.data(), 2, key), 2u);
  EXPECT_EQ(b.data()[0], first);
  EXPECT_EQ(b.data()[1], second);
  cache.release(a.table);  // the writer is done; the blocks are still held by b
  EXPECT_EQ(cache.free_blocks(), 8u - 2u);
  cache.release(b);
  EXPECT_EQ(cache.free_blocks(), 8u) << "idle cached blocks count as free";
  EXPECT_EQ(cache.cached_blocks(), 2u) << "...and stay findable";

  BlockTable c(64, kBlock);
  std::vector<std::int32_t> diverging = prompt;
  diverging[5] = 999;  // the second block differs
  EXPECT_EQ(cache.map_cached_prefix(c, diverging.data(), 2, key), 1u);
  EXPECT_EQ(c.data()[0], first);
  cache.release(c);
}

TEST(KvCachePrefixes, EvictionTakesTheOldestIdleBlocksAndNeverAHeldOne) {
  KvCache cache(shape(6));
  Computed old_one, held;
  compute(cache, old_one, run(0, 8));   // 2 blocks
  compute(cache, held, run(100, 8));    // 2 blocks, kept
  cache.release(old_one.table);         // parked
  EXPECT_EQ(cache.free_blocks(), 4u);   // 2 free + 2 parked
  BlockTable big(64, kBlock);
  ASSERT_TRUE(cache.ensure(big, 4 * kBlock));  // needs both free blocks and both parked ones
  EXPECT_EQ(cache.counters().evicted_blocks, 2u);
  EXPECT_EQ(cache.cached_blocks(), 2u) << "the held sequence's blocks stay indexed";
  BlockTable again(64, kBlock);
  std::uint64_t key = 0;
  const auto old_tokens = run(0, 8);
  EXPECT_EQ(cache.map_cached_prefix(again, old_tokens.data(), 2, key), 0u) << "evicted";
  const auto held_tokens = run(100, 8);
  EXPECT_EQ(cache.map_cached_prefix(again, held_tokens.data(), 2, key), 2u);
  EXPECT_FALSE(cache.ensure(big, 5 * kBlock)) << "nothing idle is left to evict";
  cache.release(again);
  cache.release(big);
  cache.release(held.table);
  EXPECT_EQ(cache.free_blocks(), 6u);
}

TEST(KvCachePrefixes, ACutIntoASharedBlockGivesTheBlockUpInsteadOfRewritingIt) {
  KvCache cache(shape(8));
  Computed a;
  compute(cache, a, run(1, 8));
  BlockTable b(64, kBlock);
  std::uint64_t key = 0;
  const auto tokens = run(1, 8);
  ASSERT_EQ(cache.map_cached_prefix(b, tokens.data(), 2, key), 2u);
  // a rewinds to position 6 (inside its second block, which b holds too): it keeps 4.
  EXPECT_EQ(cache.truncate(a.table, 6), 4u);
  EXPECT_EQ(cache.cached_blocks(), 2u);
  cache.release(b);
  // Now a alone holds its first block: a cut inside it unindexes it (it will be rewritten).
  EXPECT_EQ(cache.truncate(a.table, 2), 2u);
  EXPECT_EQ(cache.cached_blocks(), 1u);
  cache.release(a.table);
}

// Admission maps the cached run of a prompt's full blocks, leaving at least two rows to compute.
TEST(KvCachePrefixes, AdmissionMapsTheCachedPromptPrefix) {
  KvCache cache(shape(16));
  EngineConfig config;
  config.context_size = 32;
  config.max_sequences = 4;
  config.kv_cache_tokens = 64;
  config.block_size = kBlock;
  Scheduler scheduler(cache, config);
  const auto submit = [&](std::vector<std::int32_t> prompt) {
    auto r = std::make_unique<Request>();
    r->prompt = std::move(prompt);
    r->positions_needed = static_cast<std::uint32_t>(r->prompt.size()) + 4;
    Request* raw = r.get();
    scheduler.enqueue(std::move(r));
    scheduler.admit_waiting();
    return raw;
  };
  Request* first = submit(run(1, 12));
  ASSERT_NE(first->sequence, nullptr);
  EXPECT_EQ(first->cached, 0u);
  first->sequence->tokens = first->prompt;  // as if computed by its prefill
  first->prompt_done = static_cast<std::uint32_t>(first->prompt.size());
  scheduler.publish(*first);
  Request* same = submit(run(1, 12));  // 12 tokens: blocks 0-1 map, block 2 holds the last token
  EXPECT_EQ(same->cached, 8u);
  EXPECT_EQ(same->prompt_done, 8u);
  EXPECT_EQ(same->sequence->blocks.data()[1], first->sequence->blocks.data()[1]);
  Request* longer = submit(run(1, 14));  // ends mid-block: three full blocks map
  EXPECT_EQ(longer->cached, 12u);
  EXPECT_EQ(cache.counters().hit_blocks, 2u + 3u);
  EXPECT_EQ(cache.counters().miss_blocks, 2u) << "the first request's two eligible blocks";
}

}  // namespace
}  // namespace lpx::core
