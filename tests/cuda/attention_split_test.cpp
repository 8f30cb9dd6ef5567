// How split-K attention cuts a row's positions (kernels/cuda/attention_split.cuh), on the host,
// no GPU needed: the used chunks cover the attended positions exactly once, in order; every
// chunk but the last has the same length, a multiple of 32; no more chunks than splits; and
// the cut depends only on the row's position, window and split count.
#include <gtest/gtest.h>

#include "cuda/attention_split.cuh"

namespace lpx::kernels::cuda::detail {
namespace {

TEST(AttentionSplit, ChunksCoverTheAttendedPositionsOnceInEqualTiles) {
  for (const int splits : {1, 2, 3, 7, 33, 64}) {
    for (const int window : {0, 1, 40, 128, 4096}) {
      for (int position = 0; position < 3000; position += position < 300 ? 1 : 37) {
        SCOPED_TRACE(::testing::Message() << "splits " << splits << " window " << window
                                          << " position " << position);
        const AttentionSplit s = split_attention(position, window, splits);
        const int first = window <= 0 || position < window ? 0 : position - window + 1;
        ASSERT_EQ(s.first_position, first);
        ASSERT_EQ(s.end, position + 1);
        ASSERT_GE(s.used, 1);
        ASSERT_LE(s.used, splits);
        ASSERT_EQ(s.length % kSplitTile, 0);
        ASSERT_GT(s.length, 0);
        int next = first;
        for (int c = 0; c < s.used; ++c) {
          ASSERT_EQ(s.begin_of(c), next) << "chunk " << c;
          ASSERT_GT(s.end_of(c), s.begin_of(c)) << "chunk " << c << " is empty";
          if (c + 1 < s.used) {
            ASSERT_EQ(s.end_of(c) - s.begin_of(c), s.length);
          }
          next = s.end_of(c);
        }
        ASSERT_EQ(next, position + 1);
        // The length is the smallest tile multiple that fits in `splits` chunks.
        const int n = position + 1 - first;
        ASSERT_GE(s.length * splits, n);
        if (s.length > kSplitTile) {
          ASSERT_LT((s.length - kSplitTile) * splits, n);
        }
      }
    }
  }
}

TEST(AttentionSplit, ShortRowsTakeOneChunkAndLongRowsManyOfThirtyTwo) {
  EXPECT_EQ(split_attention(0, 0, 64).used, 1);
  EXPECT_EQ(split_attention(31, 0, 64).used, 1);
  EXPECT_EQ(split_attention(32, 0, 64).used, 2);
  EXPECT_EQ(split_attention(511, 0, 64).used, 16);  // a 512-token context at batch 1: 16 chunks
  EXPECT_EQ(split_attention(511, 0, 64).length, 32);
  EXPECT_EQ(split_attention(2047, 0, 64).used, 64);
  EXPECT_EQ(split_attention(8191, 0, 64).length, 128);
  EXPECT_EQ(split_attention(8191, 0, 1).used, 1);
  EXPECT_EQ(split_attention(8191, 512, 64).used, 16);  // a window of 512: 16 chunks of 32
  EXPECT_EQ(split_attention(8191, 512, 64).first_position, 7680);
}

}  // namespace
}  // namespace lpx::kernels::cuda::detail
