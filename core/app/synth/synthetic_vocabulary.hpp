// A byte-level BPE (gpt2-style) vocabulary of exactly the size of a real model's: GPT-2's 256
// byte characters, merges that build longer tokens from them (every merge joins two existing
// tokens into a new one, so the tokenizer accepts it), and the model family's special tokens
// with a matching chat template. Made-up words, real structure and size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "synth/model_shapes.hpp"

namespace lpx::core::synth {

struct SyntheticVocabulary {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> token_types;  // 1 normal, 3 control
  std::vector<std::string> merges;        // "a b", best first
  std::int32_t bos = 0, eos = 0;
  std::string chat_template;
};

SyntheticVocabulary make_vocabulary(const ModelShape& shape);

}  // namespace lpx::core::synth
