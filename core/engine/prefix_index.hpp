// Full KV blocks found by what they hold (automatic prefix caching). A block's key chains its
// parent's key with its token ids, so one key stands for the whole prefix up to the block's
// end: a new sequence whose prompt starts the same way finds its blocks one by one from the
// first, and maps them instead of computing them. Each indexed block keeps its parent's key and
// its tokens, checked on every find, so a hash collision can only miss, never give wrong K/V.
//
// Indexed blocks that no sequence holds are "parked": they keep their K/V and stay findable, in
// least-recently-used order, until the pool needs a block and evicts the oldest.
//
// Fixed size (one slot per block of the pool, allocated once): no allocation after construction.
// Threading: the engine's, through KvCache.
#pragma once

#include <cstdint>
#include <vector>

namespace lpx::core {

class PrefixIndex {
 public:
  PrefixIndex(std::uint32_t n_blocks, std::uint32_t block_size);

  // The key of a prefix's first block's parent. It stands for everything besides the tokens
  // that decides a block's K/V: one engine serves one model with one configuration (adapters
  // would give their own root).
  static constexpr std::uint64_t kRoot = 0x6c70782d70726566ULL;
  // The key of the block holding `tokens` (block_size of them) after the prefix keyed `parent`.
  std::uint64_t key(std::uint64_t parent, const std::int32_t* tokens) const noexcept;

  // The block indexed under `key` that holds `tokens` after `parent`; -1 when none.
  std::int32_t find(std::uint64_t key, std::uint64_t parent, const std::int32_t* tokens) const noexcept;
  // Indexes `block` (not indexed yet) under `key`. False, and nothing changes, when another
  // block holds that prefix already.
  bool add(std::int32_t block, std::uint64_t key, std::uint64_t parent, const std::int32_t* tokens) noexcept;
  // Forgets `block` (its contents are about to change). It must not be parked.
  void remove(std::int32_t block) noexcept;
  bool indexed(std::int32_t block) const noexcept { return indexed_[static_cast<std::size_t>(block)] != 0; }
  std::uint32_t size() const noexcept { return size_; }

  // An indexed block nobody holds any more: the most recently used of the parked ones.
  void park(std::int32_t block) noexcept;
  // A parked block held again.
  void unpark(std::int32_t block) noexcept;
  bool parked(std::int32_t block) const noexcept { return parked_[static_cast<std::size_t>(block)] != 0; }
  std::uint32_t parked_count() const noexcept { return parked_count_; }
  // The least recently used parked block, forgotten and unparked, for the pool to reuse; -1
  // when none is parked.
  std::int32_t evict() noexcept;

 private:
  // Open addressing with linear probing, deletion by backward shift (no tombstones).
  std::size_t slot_of(std::uint64_t key) const noexcept { return static_cast<std::size_t>(key) & mask_; }
  void erase_slot(std::size_t slot) noexcept;

  std::uint32_t block_size_;
  std::size_t mask_;
  std::vector<std::uint64_t> slot_keys_;
  std::vector<std::int32_t> slot_blocks_;  // -1: empty
  // Per block.
  std::vector<std::uint64_t> keys_, parents_;
  std::vector<std::int32_t> tokens_;  // n_blocks x block_size
  std::vector<std::uint8_t> indexed_, parked_;
  std::vector<std::int32_t> older_, newer_;  // the parked list, oldest at head_
  std::int32_t head_ = -1, tail_ = -1;
  std::uint32_t size_ = 0, parked_count_ = 0;
};

}  // namespace lpx::core
