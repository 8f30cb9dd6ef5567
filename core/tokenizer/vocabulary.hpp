// A tokenizer's vocabulary as a model file describes it: the GGUF "tokenizer.ggml.*" keys, read
// and checked. Plain data; build a Tokenizer from it (tokenizer/tokenizer.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "util/expected.hpp"

namespace lpx::core {

class ModelFile;

// tokenizer.ggml.model: "llama" is SentencePiece-style BPE over scores, "gpt2" byte-level BPE over
// ranked merges.
enum class TokenizerModel { spm, bpe };
// "llama" or "gpt2", as the metadata spells it.
const char* tokenizer_model_name(TokenizerModel model) noexcept;

// tokenizer.ggml.token_type values.
enum class TokenType : std::int32_t {
  undefined = 0,
  normal = 1,
  unknown = 2,
  control = 3,
  user_defined = 4,
  unused = 5,
  byte = 6,
};

// tokenizer.ggml.*_token_id; absent ids are nullopt.
struct SpecialTokenIds {
  std::optional<std::int32_t> bos, eos, unknown, padding, separator, mask;
  std::optional<std::int32_t> eot, eom;  // end of turn, end of message
  std::optional<std::int32_t> fim_prefix, fim_suffix, fim_middle, fim_pad, fim_repo, fim_separator;
};

struct Vocabulary {
  TokenizerModel model = TokenizerModel::spm;
  // tokenizer.ggml.pre: the pre-tokenizer (regex set) of a gpt2 model; "default" when absent.
  // Ignored by spm models.
  std::string pre = "default";
  // tokenizer.lpx.pre_patterns: the pre-tokenizer's regexes themselves (PCRE2 syntax), as a format
  // that reads Hugging Face's tokenizer.json gives them. When set they replace `pre`'s, and
  // ignore_merges comes from tokenizer.lpx.ignore_merges.
  std::vector<std::string> pre_patterns;
  bool ignore_merges = false;
  // general.name. llama.cpp keys one per-model fix on it (Phi-3's special tokens swallow the
  // whitespace after them); empty when absent.
  std::string model_name;
  std::vector<std::string> tokens;  // id -> text (raw bytes; unique unless empty)
  std::vector<float> scores;        // spm merge scores: empty (all 0) or one per token
  std::vector<TokenType> types;     // empty (all normal) or one per token
  std::vector<std::string> merges;  // bpe: "left right", highest priority first
  SpecialTokenIds special;
  bool add_bos = false;           // encode() prepends BOS (unless told not to)
  bool add_eos = false;           // encode() appends EOS (unless told not to)
  bool add_space_prefix = false;  // spm: a space is put before text at the start / after a token
};

// Reads the vocabulary of `file`. Defaults follow llama.cpp: spm models add BOS and a space prefix
// unless the metadata says otherwise and default to BOS 1, EOS 2, UNK 0 (when in range); gpt2
// models add BOS only for pre-tokenizers that do (llama-bpe, tekken) and have no default ids.
// Errors start with the file's path and name the key: a missing or mistyped key, an unknown model
// or pre-tokenizer, arrays whose lengths disagree, special ids outside the vocabulary, add_bos
// without a BOS id. Structural checks of tokens and merges happen in Tokenizer::create.
Expected<Vocabulary> load_vocabulary(const ModelFile& file);

// The checks on a vocabulary's shape that need no tables: array lengths, token types, scores,
// special ids in range, add_bos/add_eos with their ids, the pre-tokenizer known. The first problem
// found, or nullopt.
std::optional<std::string> check_vocabulary_shape(const Vocabulary& vocabulary);

}  // namespace lpx::core
