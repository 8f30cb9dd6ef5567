// Limits that keep a hostile file from making the parser allocate or recurse without bound.
// Real files stay far below them (the largest vocabularies have ~260k tokens).
#pragma once

#include <cstdint>

namespace lpx::gguf {

struct Limits {
  std::uint64_t max_key_bytes = 1024;
  std::uint64_t max_string_bytes = 64ull << 20;      // a chat template or a licence, not a model
  std::uint64_t max_array_elements = 16ull << 20;    // 16M tokens/merges/scores
  std::uint64_t max_metadata_entries = 1ull << 16;
  std::uint64_t max_tensors = 1ull << 20;
  std::uint64_t max_tensor_name_bytes = 256;
  std::uint32_t max_array_depth = 3;                 // arrays of arrays of arrays
  std::uint64_t max_alignment = 1ull << 20;
};

}  // namespace lpx::gguf
