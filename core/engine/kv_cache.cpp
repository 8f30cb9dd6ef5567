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

KvCache::KvCache(const KvCacheShape& shape) : shape_(shape) {
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

bool KvCache::ensure(BlockTable& table, std::uint32_t positions) {
  const std::uint32_t needed = blocks_for(positions);
  if (needed <= table.blocks_.size()) return true;
  if (needed - table.blocks_.size() > free_.size()) return false;
  while (table.blocks_.size() < needed) {
    table.blocks_.push_back(free_.back());  // within the reserved capacity when sized right
    free_.pop_back();
  }
  return true;
}

void KvCache::truncate(BlockTable& table, std::uint32_t positions) {
  const std::uint32_t keep = blocks_for(positions);
  while (table.blocks_.size() > keep) {
    if (table.blocks_.back() >= 0) free_.push_back(table.blocks_.back());  // not a dropped one
    table.blocks_.pop_back();
  }
}

void KvCache::drop_before(BlockTable& table, std::uint32_t position) {
  const std::size_t whole = std::min<std::size_t>(position / shape_.block_size, table.blocks_.size());
  for (std::size_t b = 0; b < whole; ++b) {
    if (table.blocks_[b] < 0) continue;
    free_.push_back(table.blocks_[b]);
    table.blocks_[b] = -1;
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
