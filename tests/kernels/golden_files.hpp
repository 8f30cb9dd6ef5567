// Reading the golden data written by tools/make_dequant_goldens.py (from the gguf Python
// package): <name>.blocks.bin / <name>.f32.bin per tensor type, and ggml_types.tsv.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lpx::kernels::reference::golden {

// The whole file as bytes; fails the current test (and returns empty) when it cannot be read.
std::vector<std::uint8_t> read_golden_file(const std::string& file_name);

// One line of ggml_types.tsv: a GGML type id and its geometry according to gguf.
struct GgmlTypeRow {
  std::uint32_t id;
  std::string name;
  std::uint32_t block_elements;
  std::uint32_t block_bytes;
};

std::vector<GgmlTypeRow> read_ggml_type_table();

}  // namespace lpx::kernels::reference::golden
