// Limits that keep a hostile model directory from making the reader allocate without bound.
// Real models stay far below them.
#pragma once

#include <cstdint>

namespace lpx::safetensors {

struct Limits {
  // The safetensors reference implementation refuses headers over 100 MB; so do we.
  std::uint64_t max_header_bytes = 100'000'000;
  std::uint64_t max_tensors = 1u << 20;
  std::uint64_t max_tensor_name_bytes = 512;
  std::uint32_t max_json_depth = 64;
  std::uint64_t max_shards = 4096;
  std::uint64_t max_config_bytes = 16u << 20;      // config.json, tokenizer_config.json, index
  std::uint64_t max_tokenizer_bytes = 512u << 20;  // tokenizer.json (vocabularies of ~260k tokens)
};

}  // namespace lpx::safetensors
