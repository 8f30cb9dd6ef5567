#include "engine/kv_cache.hpp"

#include <algorithm>
#include <cstdlib>
#include <new>

#include "reference/half_precision.hpp"

namespace lpx::core {

BlockTable::BlockTable(std::uint32_t max_positions, std::uint32_t block_size) {
  blocks_.reserve((max_positions + block_size - 1) / block_size);
}

std::uint32_t BlockTable::first_held_position(std::uint32_t block_size) const noexcept {
  std::size_t b = 0;
  while (b < blocks_.size() && blocks_[b] < 0) ++b;
  return static_cast<std::uint32_t>(b) * block_size;
}

void KvCache::FreeDeleter::operator()(std::uint16_t* p) const noexcept { std::free(p); }

KvCache::KvCache(const KvCacheShape& shape)
    : shape_(shape), holders_(shape.n_blocks), index_(shape.n_blocks, shape.block_size) {
  block_elements_ = std::size_t{shape.block_size} * shape.n_kv_heads * shape.head_dim;
  pool_elements_ = block_elements_ * shape.n_blocks;
  const std::size_t elements = pool_elements_ * 2 * shape.n_layer;
  bytes_ = elements * sizeof(std::uint16_t);
  if (shape.host_storage) {
    // calloc: large requests come as fresh zero pages from the kernel, so memory is only
    // committed as positions are written.
    storage_.reset(static_cast<std::uint16_t*>(std::calloc(elements, sizeof(std::uint16_t))));
    if (!storage_ && elements != 0) throw std::bad_alloc();
  }
  free_.reserve(shape.n_blocks);
  for (std::uint32_t b = shape.n_blocks; b-- > 0;) free_.push_back(static_cast<std::int32_t>(b));
}

std::int32_t KvCache::take_block() {
  std::int32_t block = -1;
  if (!free_.empty()) {
    block = free_.back();
    free_.pop_back();
  } else if ((block = index_.evict()) >= 0) {
    ++counters_.evicted_blocks;
  }
  if (block >= 0) holders_[static_cast<std::size_t>(block)] = 1;
  return block;
}

void KvCache::let_go(std::int32_t block) {
  if (block < 0) return;  // a dropped entry
  if (--holders_[static_cast<std::size_t>(block)] > 0) return;
  if (index_.indexed(block)) {
    index_.park(block);  // its K/V stays findable until the pool needs the block
  } else {
    free_.push_back(block);
  }
}

bool KvCache::ensure(BlockTable& table, std::uint32_t positions) {
  const std::uint32_t needed = blocks_for(positions);
  if (needed <= table.blocks_.size()) return true;
  if (needed - table.blocks_.size() > free_blocks()) return false;
  while (table.blocks_.size() < needed) {
    table.blocks_.push_back(take_block());  // within the reserved capacity when sized right
  }
  return true;
}

std::uint32_t KvCache::truncate(BlockTable& table, std::uint32_t positions) {
  std::uint32_t keep = blocks_for(positions);
  if (positions % shape_.block_size != 0 && keep <= table.blocks_.size()) {
    // The last kept block will be written from `positions` on: only its sole holder may, and
    // then it no longer holds what the index says.
    const std::int32_t last = table.blocks_[keep - 1];
    if (last >= 0 && holders_[static_cast<std::size_t>(last)] > 1) {
      --keep;
      positions = keep * shape_.block_size;
    } else if (last >= 0) {
      index_.remove(last);
    }
  }
  while (table.blocks_.size() > keep) {
    let_go(table.blocks_.back());
    table.blocks_.pop_back();
  }
  return std::min<std::uint32_t>(positions, static_cast<std::uint32_t>(table.blocks_.size()) * shape_.block_size);
}

void KvCache::drop_before(BlockTable& table, std::uint32_t position) {
  const std::size_t whole = std::min<std::size_t>(position / shape_.block_size, table.blocks_.size());
  for (std::size_t b = 0; b < whole; ++b) {
    if (table.blocks_[b] < 0) continue;
    let_go(table.blocks_[b]);
    table.blocks_[b] = -1;
  }
}

std::uint32_t KvCache::map_cached_prefix(BlockTable& table, const std::int32_t* tokens,
                                         std::uint32_t max_blocks, std::uint64_t& key, std::uint64_t root) {
  key = root;
  std::uint32_t mapped = 0;
  while (mapped < max_blocks) {
    const std::int32_t* block_tokens = tokens + std::size_t{mapped} * shape_.block_size;
    const std::uint64_t next = index_.key(key, block_tokens);
    const std::int32_t block = index_.find(next, key, block_tokens);
    if (block < 0) break;
    index_.unpark(block);
    ++holders_[static_cast<std::size_t>(block)];
    table.blocks_.push_back(block);
    key = next;
    ++mapped;
  }
  return mapped;
}

void KvCache::publish(const BlockTable& table, const std::vector<std::int32_t>& tokens, std::size_t count,
                      std::uint32_t& published, std::uint64_t& key) {
  const std::size_t full = std::min(std::min(count, tokens.size()) / shape_.block_size, table.blocks_.size());
  for (; published < full; ++published) {
    const std::int32_t* block_tokens = tokens.data() + std::size_t{published} * shape_.block_size;
    const std::uint64_t next = index_.key(key, block_tokens);
    const std::int32_t block = table.blocks_[published];
    // A block given back (out of every window) or mapped from the cache is not indexed again.
    if (block >= 0 && !index_.indexed(block)) index_.add(block, next, key, block_tokens);
    key = next;
  }
}

std::uint16_t* KvCache::slot(std::uint32_t layer, std::uint32_t kv, const BlockTable& table,
                             std::uint32_t position) noexcept {
  const std::int32_t block = table.blocks_[position / shape_.block_size];
  const std::size_t offset = static_cast<std::size_t>(block) * block_elements_ +
                             std::size_t{position % shape_.block_size} * shape_.n_kv_heads *
                                 shape_.head_dim;
  return storage_.get() + (std::size_t{layer} * 2 + kv) * pool_elements_ + offset;
}

void KvCache::store(std::uint32_t layer, const BlockTable& table, std::uint32_t position,
                    const float* k, const float* v) {
  const std::size_t n = std::size_t{shape_.n_kv_heads} * shape_.head_dim;
  std::uint16_t* k_out = slot(layer, 0, table, position);
  std::uint16_t* v_out = slot(layer, 1, table, position);
  for (std::size_t i = 0; i < n; ++i) k_out[i] = kernels::reference::f32_to_f16(k[i]);
  for (std::size_t i = 0; i < n; ++i) v_out[i] = kernels::reference::f32_to_f16(v[i]);
}

}  // namespace lpx::core
