// The KV cache, owned by the core and paged: every layer has a pool of K blocks and a pool of V
// blocks; a block holds `block_size` consecutive positions of one sequence as
// block_size x n_kv_heads x head_dim f16 values (the layout lpx_attention_args describes). A
// sequence owns a BlockTable, the list of its blocks, so sequences of any length share one pool
// without fragmentation, and a sequence's blocks can be freed or reused (session prefixes).
//
// Blocks are counted by reference: a full block of a computed prefix can sit in several tables
// (prefix caching, PrefixIndex), and goes back to the pool when the last one lets it go. A block
// is written only by the one sequence that is filling it: shared blocks are full, and a table
// cut back into a shared block gives that block up rather than write into it.
//
// Threading: used by the engine thread only. No allocation after construction: block tables
// reserve their capacity when made.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/prefix_index.hpp"

namespace lpx::core {

struct KvCacheShape {
  std::uint32_t n_layer = 0;
  std::uint32_t n_kv_heads = 0;
  std::uint32_t head_dim = 0;
  std::uint32_t block_size = 16;  // positions per block
  std::uint32_t n_blocks = 0;     // blocks per layer pool
  // False when the pools live on a backend's device (lpx_device_model): the cache then keeps
  // only the block bookkeeping, and store / k_pool / v_pool must not be called.
  bool host_storage = true;
};

class KvCache;

// The blocks of one sequence, in position order. Position t is slot t % block_size of block
// blocks()[t / block_size]. Blocks that no row will attend to again (before every layer's
// window) may have been given back: their entries are -1, always a run at the front.
class BlockTable {
 public:
  BlockTable() = default;
  // Room for `max_positions` positions without reallocating.
  explicit BlockTable(std::uint32_t max_positions, std::uint32_t block_size);

  const std::int32_t* data() const noexcept { return blocks_.data(); }
  std::uint32_t capacity_positions(std::uint32_t block_size) const noexcept {
    return static_cast<std::uint32_t>(blocks_.size()) * block_size;
  }
  std::size_t size() const noexcept { return blocks_.size(); }
  // The first position whose block is held (size() * block_size when none is).
  std::uint32_t first_held_position(std::uint32_t block_size) const noexcept;

 private:
  friend class KvCache;
  std::vector<std::int32_t> blocks_;
};

// What the prefix cache did, since the engine started.
struct PrefixCacheCounters {
  std::uint64_t hit_blocks = 0;    // prompt blocks mapped from the cache instead of computed
  std::uint64_t miss_blocks = 0;   // full prompt blocks looked up and not found
  std::uint64_t evicted_blocks = 0;
};

class KvCache {
 public:
  explicit KvCache(const KvCacheShape& shape);

  const KvCacheShape& shape() const noexcept { return shape_; }
  // Bytes of the K and V pools, wherever they live.
  std::size_t bytes() const noexcept { return bytes_; }
  std::uint32_t total_positions() const noexcept { return shape_.n_blocks * shape_.block_size; }
  // Blocks a table can take now: free ones and cached ones no sequence holds (evicted as needed).
  std::uint32_t free_blocks() const noexcept {
    return static_cast<std::uint32_t>(free_.size()) + index_.parked_count();
  }
  // Blocks needed to hold `positions` positions.
  std::uint32_t blocks_for(std::uint32_t positions) const noexcept {
    return (positions + shape_.block_size - 1) / shape_.block_size;
  }

  // Grows `table` until it holds `positions` positions, evicting the least recently used
  // cached blocks when no free one is left. False (and nothing taken) when the pool has too few.
  bool ensure(BlockTable& table, std::uint32_t positions);
  // Shrinks `table` to the blocks needed for `positions` positions, letting go of the rest.
  // Returns the positions it keeps: `positions`, or fewer (down to a block boundary) when the
  // block that would be partly rewritten is shared with another table.
  std::uint32_t truncate(BlockTable& table, std::uint32_t positions);
  // Lets go of every block of `table` that lies wholly before `position` (its entry becomes -1);
  // the table keeps its length. For positions outside every layer's window.
  void drop_before(BlockTable& table, std::uint32_t position);
  void release(BlockTable& table) { truncate(table, 0); }

  // --- prefix caching -------------------------------------------------------------------------
  // Maps into the empty `table` the longest run of cached blocks that hold `tokens` from the
  // start, at most `max_blocks` of them, in the chain that starts at `root` (the base model's,
  // or a LoRA adapter's); returns how many. `key` becomes the last mapped block's key (`root`
  // when none).
  std::uint32_t map_cached_prefix(BlockTable& table, const std::int32_t* tokens, std::uint32_t max_blocks,
                                  std::uint64_t& key, std::uint64_t root = PrefixIndex::kRoot);
  // Indexes the blocks of `table` that the first `count` of `tokens` have filled since the first
  // `published` ones (advanced; `key` is the last published block's key), so later prompts can
  // map them.
  void publish(const BlockTable& table, const std::vector<std::int32_t>& tokens, std::size_t count,
               std::uint32_t& published, std::uint64_t& key);
  // Counts an admitted request's lookup: `hit` blocks mapped of `eligible` full prompt blocks.
  void count_lookup(std::uint32_t hit, std::uint32_t eligible) noexcept {
    counters_.hit_blocks += hit;
    counters_.miss_blocks += eligible - hit;
  }
  const PrefixCacheCounters& counters() const noexcept { return counters_; }
  std::uint32_t cached_blocks() const noexcept { return index_.size(); }

  const std::uint16_t* k_pool(std::uint32_t layer) const noexcept { return pool(layer, 0); }
  const std::uint16_t* v_pool(std::uint32_t layer) const noexcept { return pool(layer, 1); }
  // Writes one position's K and V (n_kv_heads x head_dim f32 each, rounded to f16).
  void store(std::uint32_t layer, const BlockTable& table, std::uint32_t position, const float* k,
             const float* v);

 private:
  const std::uint16_t* pool(std::uint32_t layer, std::uint32_t kv) const noexcept {
    return storage_.get() + (std::size_t{layer} * 2 + kv) * pool_elements_;
  }
  std::uint16_t* slot(std::uint32_t layer, std::uint32_t kv, const BlockTable& table,
                      std::uint32_t position) noexcept;

  struct FreeDeleter {
    void operator()(std::uint16_t* p) const noexcept;
  };

  KvCacheShape shape_;
  std::size_t block_elements_ = 0;
  std::size_t pool_elements_ = 0;
  std::size_t bytes_ = 0;
  std::unique_ptr<std::uint16_t, FreeDeleter> storage_;
  // Takes a block for a table (free, or the oldest parked one evicted); -1 when none is left.
  std::int32_t take_block();
  // A table lets go of `block`: the last holder parks it when indexed, or frees it.
  void let_go(std::int32_t block);

  std::vector<std::int32_t> free_;  // a stack of free block indices, neither held nor indexed
  std::vector<std::uint32_t> holders_;  // per block: the tables that hold it
  PrefixIndex index_;
  PrefixCacheCounters counters_;
};

}  // namespace lpx::core
