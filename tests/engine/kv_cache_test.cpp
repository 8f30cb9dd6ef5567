#include "engine/kv_cache.hpp"

#include <gtest/gtest.h>

#include <set>

#include "reference/half_precision.hpp"

namespace lpx::core {
namespace {

KvCacheShape shape(std::uint32_t blocks) { return {2, 3, 4, 4, blocks}; }

TEST(KvCache, SizesItsPoolsFromTheShape) {
  KvCache cache(shape(10));
  // 2 layers x (K + V) x 10 blocks x 4 positions x 3 heads x 4 dims x 2 bytes
  EXPECT_EQ(cache.bytes(), 2u * 2 * 10 * 4 * 3 * 4 * 2);
  EXPECT_EQ(cache.total_positions(), 40u);
  EXPECT_EQ(cache.free_blocks(), 10u);
}

TEST(KvCache, EnsureTakesWholeBlocksAndRefusesWhatItCannotGive) {
  KvCache cache(shape(3));
  BlockTable a(100, 4), b(100, 4);
  EXPECT_TRUE(cache.ensure(a, 5));  // 2 blocks
  EXPECT_EQ(a.size(), 2u);
  EXPECT_EQ(cache.free_blocks(), 1u);
  EXPECT_FALSE(cache.ensure(b, 8));  // needs 2, 1 free: nothing taken
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(cache.free_blocks(), 1u);
  cache.truncate(a, 4);  // back to 1 block
  EXPECT_EQ(cache.free_blocks(), 2u);
  EXPECT_TRUE(cache.ensure(b, 8));
  std::set<std::int32_t> used{a.data()[0], b.data()[0], b.data()[1]};
  EXPECT_EQ(used.size(), 3u) << "a block was handed out twice";
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(cache.free_blocks(), 3u);
}

// Blocks before every layer's window go back to the pool one whole block at a time; the
// table keeps its length (holes of -1 at the front), and truncating or releasing it later
// returns only the blocks it still holds.
TEST(KvCache, DropBeforeReturnsWholeBlocksAndTruncateSkipsTheHoles) {
  KvCache cache(shape(5));
  BlockTable a(100, 4);
  ASSERT_TRUE(cache.ensure(a, 20));  // 5 blocks, none free
  const std::int32_t third = a.data()[2];
  cache.drop_before(a, 7);  // positions 0-3 are wholly before 7; 4-7 are not
  EXPECT_EQ(cache.free_blocks(), 1u);
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(a.data()[0], -1);
  EXPECT_EQ(a.first_held_position(4), 4u);
  cache.drop_before(a, 12);  // and now 4-11
  EXPECT_EQ(cache.free_blocks(), 3u);
  EXPECT_EQ(a.first_held_position(4), 12u);
  EXPECT_EQ(a.data()[2], -1);
  cache.drop_before(a, 12);  // nothing more
  EXPECT_EQ(cache.free_blocks(), 3u);
  BlockTable b(100, 4);
  ASSERT_TRUE(cache.ensure(b, 12));  // the dropped blocks serve another sequence
  EXPECT_EQ(cache.free_blocks(), 0u);
  EXPECT_TRUE(b.data()[0] == third || b.data()[1] == third || b.data()[2] == third);
  cache.truncate(a, 10);  // keeps 3 entries, of which none is held: returns blocks 3 and 4
  EXPECT_EQ(cache.free_blocks(), 2u);
  cache.release(a);
  cache.release(b);
  EXPECT_EQ(cache.free_blocks(), 5u);
  BlockTable empty(100, 4);
  EXPECT_EQ(empty.first_held_position(4), 0u);
}

TEST(KvCache, StoresEachPositionInItsBlockSlot) {
  KvCache cache(shape(4));
  BlockTable t(16, 4);
  ASSERT_TRUE(cache.ensure(t, 6));
  std::vector<float> k(12), v(12);
  for (int i = 0; i < 12; ++i) {
    k[i] = 0.5f * static_cast<float>(i) + 1.0f;
    v[i] = -0.25f * static_cast<float>(i) - 3.0f;
  }
  cache.store(1, t, 5, k.data(), v.data());  // block t[1], slot 1
  const std::size_t block_elements = 4 * 3 * 4;
  const std::uint16_t* kp = cache.k_pool(1) + static_cast<std::size_t>(t.data()[1]) * block_elements + 1 * 12;
  const std::uint16_t* vp = cache.v_pool(1) + static_cast<std::size_t>(t.data()[1]) * block_elements + 1 * 12;
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(kernels::reference::f16_to_f32(kp[i]), k[i]);
    EXPECT_EQ(kernels::reference::f16_to_f32(vp[i]), v[i]);
  }
  // Layer 0 is untouched.
  const std::uint16_t* k0 = cache.k_pool(0) + static_cast<std::size_t>(t.data()[1]) * block_elements + 12;
  EXPECT_EQ(k0[0], 0u);
}

}  // namespace
}  // namespace lpx::core
