// Where everything sits in a GGUF file, for rewriting it: each metadata entry's raw bytes (so
// that a rewrite copies them exactly), each tensor's description and data range, the alignment.
// Reads the header only; every count, length and range is checked against the file, and a
// malformed file is an error naming what and where, never a crash.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.hpp"

namespace lpx::core {

struct GgufEntry {
  std::string key;
  std::uint32_t value_type = 0;   // GGUF's: 4 = u32, 8 = string, 9 = array...
  std::uint64_t begin = 0, end = 0;  // the whole entry, key included: [begin, end) in the file
  std::uint64_t value_begin = 0;     // where its value starts
};

struct GgufTensor {
  std::string name;
  std::vector<std::uint64_t> dims;  // dims[0]: elements per row
  std::uint32_t ggml_type = 0;
  std::uint64_t offset = 0;  // from the start of the data section
  std::uint64_t bytes = 0;
};

struct GgufLayout {
  std::string path;
  std::uint32_t version = 0;
  std::vector<GgufEntry> entries;
  std::vector<GgufTensor> tensors;
  std::uint64_t alignment = 32;
  std::uint64_t data_start = 0;
  std::uint64_t file_size = 0;

  const GgufEntry* find(const std::string& key) const;
};

Expected<GgufLayout> read_gguf_layout(const std::string& path);

// The value of a u32 or string entry, read from the file; nullopt when the entry has another type.
Expected<std::optional<std::uint64_t>> read_gguf_uint(const GgufLayout& layout, const GgufEntry& entry);
Expected<std::optional<std::string>> read_gguf_string(const GgufLayout& layout, const GgufEntry& entry);

}  // namespace lpx::core
