// A tiny but complete llama-architecture GGUF model for tests, with knobs to break it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "formats/gguf_builder.hpp"

namespace lpx::test {

struct TinyLlama {
  std::string architecture = "llama";
  std::uint32_t n_layer = 2, n_embd = 64, n_ff = 96, n_head = 4, n_head_kv = 2, n_vocab = 40;
  std::uint32_t n_rot = 16;          // head dim is n_embd / n_head = 16
  std::uint32_t tokenizer_tokens = 0;  // 0: n_vocab tokens
  bool tied_output = false;
  std::uint32_t weight_type = kGgmlF32;
  std::uint32_t norm_type = kGgmlF32;
  std::map<std::string, std::uint32_t> metadata_u32;  // override "llama.block_count" etc.
  std::set<std::string> skip_metadata;                 // leave these keys out
  std::set<std::string> skip_tensors;  // leave these tensors out
  std::string extra_tensor;            // add a tensor of this name
  std::string ffn_up_shape_override;   // "bad": make blk.0.ffn_up.weight the wrong shape

  // The file as a builder (add or override metadata before building).
  GgufBuilder builder() const;
};

}  // namespace lpx::test
