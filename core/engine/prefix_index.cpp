#include "engine/prefix_index.hpp"

#include <algorithm>
#include <bit>

namespace lpx::core {
namespace {

std::uint64_t mix(std::uint64_t x) noexcept {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

PrefixIndex::PrefixIndex(std::uint32_t n_blocks, std::uint32_t block_size)
    : block_size_(block_size),
      keys_(n_blocks),
      parents_(n_blocks),
      tokens_(std::size_t{n_blocks} * block_size),
      indexed_(n_blocks),
      parked_(n_blocks),
      older_(n_blocks, -1),
      newer_(n_blocks, -1) {
  const std::size_t slots = std::bit_ceil(std::size_t{2} * std::max<std::uint32_t>(n_blocks, 1));
  mask_ = slots - 1;
  slot_keys_.assign(slots, 0);
  slot_blocks_.assign(slots, -1);
}

std::uint64_t PrefixIndex::key(std::uint64_t parent, const std::int32_t* tokens) const noexcept {
  std::uint64_t h = mix(parent);
  for (std::uint32_t i = 0; i < block_size_; ++i) h = mix(h ^ static_cast<std::uint32_t>(tokens[i]));
  return h;
}

std::int32_t PrefixIndex::find(std::uint64_t key, std::uint64_t parent, const std::int32_t* tokens) const noexcept {
  for (std::size_t s = slot_of(key); slot_blocks_[s] >= 0; s = (s + 1) & mask_) {
    if (slot_keys_[s] != key) continue;
    const auto b = static_cast<std::size_t>(slot_blocks_[s]);
    const std::int32_t* held = tokens_.data() + b * block_size_;
    if (parents_[b] == parent && std::equal(held, held + block_size_, tokens)) return slot_blocks_[s];
  }
  return -1;
}

bool PrefixIndex::add(std::int32_t block, std::uint64_t key, std::uint64_t parent,
                      const std::int32_t* tokens) noexcept {
  if (find(key, parent, tokens) >= 0) return false;
  std::size_t s = slot_of(key);
  while (slot_blocks_[s] >= 0) s = (s + 1) & mask_;  // at most half the slots are taken
  slot_keys_[s] = key;
  slot_blocks_[s] = block;
  const auto b = static_cast<std::size_t>(block);
  keys_[b] = key;
  parents_[b] = parent;
  std::copy(tokens, tokens + block_size_, tokens_.begin() + static_cast<std::ptrdiff_t>(b * block_size_));
  indexed_[b] = 1;
  ++size_;
  return true;
}

void PrefixIndex::erase_slot(std::size_t hole) noexcept {
  slot_blocks_[hole] = -1;
  // Entries after the hole that probed past it move back into it.
  for (std::size_t s = (hole + 1) & mask_; slot_blocks_[s] >= 0; s = (s + 1) & mask_) {
    const std::size_t home = slot_of(slot_keys_[s]);
    const bool reachable_without_hole = hole < s ? (home > hole && home <= s) : (home > hole || home <= s);
    if (reachable_without_hole) continue;
    slot_keys_[hole] = slot_keys_[s];
    slot_blocks_[hole] = slot_blocks_[s];
    slot_blocks_[s] = -1;
    hole = s;
  }
}

void PrefixIndex::remove(std::int32_t block) noexcept {
  const auto b = static_cast<std::size_t>(block);
  if (!indexed_[b]) return;
  for (std::size_t s = slot_of(keys_[b]);; s = (s + 1) & mask_) {
    if (slot_blocks_[s] == block) {
      erase_slot(s);
      break;
    }
  }
  indexed_[b] = 0;
  --size_;
}

void PrefixIndex::park(std::int32_t block) noexcept {
  const auto b = static_cast<std::size_t>(block);
  parked_[b] = 1;
  older_[b] = tail_;
  newer_[b] = -1;
  if (tail_ >= 0) newer_[static_cast<std::size_t>(tail_)] = block;
  tail_ = block;
  if (head_ < 0) head_ = block;
  ++parked_count_;
}

void PrefixIndex::unpark(std::int32_t block) noexcept {
  const auto b = static_cast<std::size_t>(block);
  if (!parked_[b]) return;
  if (older_[b] >= 0) newer_[static_cast<std::size_t>(older_[b])] = newer_[b]; else head_ = newer_[b];
  if (newer_[b] >= 0) older_[static_cast<std::size_t>(newer_[b])] = older_[b]; else tail_ = older_[b];
  older_[b] = newer_[b] = -1;
  parked_[b] = 0;
  --parked_count_;
}

std::int32_t PrefixIndex::evict() noexcept {
  const std::int32_t oldest = head_;
  if (oldest < 0) return -1;
  unpark(oldest);
  remove(oldest);
  return oldest;
}

}  // namespace lpx::core
