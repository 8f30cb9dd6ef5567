// One decode step's work: rows (tokens) from one or more sequences, each at its cache position,
// grouped into runs of consecutive rows of one sequence (a prefill chunk or a single decode
// token), plus which rows need logits.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_cache.hpp"

namespace lpx::core {

class ResidentAdapter;

struct BatchSequence {
  const BlockTable* blocks;  // the sequence's pages; positions of its rows already allocated
  std::uint32_t first_row;
  std::uint32_t n_rows;
  const ResidentAdapter* adapter = nullptr;  // the LoRA adapter its rows run with; NULL: none
};

struct Batch {
  std::vector<std::int32_t> tokens;      // per row
  std::vector<std::int32_t> positions;   // per row: the cache position it is written to
  std::vector<BatchSequence> sequences;  // consecutive, covering every row
  std::vector<std::uint32_t> output_rows;  // rows whose logits are wanted, ascending

  // Capacity for `max_rows` rows and `max_sequences` runs, so filling never allocates.
  void reserve(std::uint32_t max_rows, std::uint32_t max_sequences) {
    tokens.reserve(max_rows);
    positions.reserve(max_rows);
    sequences.reserve(max_sequences);
    output_rows.reserve(max_rows);
  }
  void clear() noexcept {
    tokens.clear();
    positions.clear();
    sequences.clear();
    output_rows.clear();
  }
  std::uint32_t rows() const noexcept { return static_cast<std::uint32_t>(tokens.size()); }
};

}  // namespace lpx::core
