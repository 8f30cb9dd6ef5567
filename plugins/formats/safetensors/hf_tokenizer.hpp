// tokenizer.json (Hugging Face tokenizers) and tokenizer_config.json as the GGUF tokenizer keys
// the core reads: tokenizer.ggml.{model, tokens, token_type, merges, scores, *_token_id,
// add_bos_token, add_eos_token, add_space_prefix} and, for byte-level BPE, the pre-tokenizer's
// regexes themselves (tokenizer.lpx.pre_patterns, tokenizer.lpx.ignore_merges).
//
// Two kinds of BPE are read, as llama.cpp's converter reads them:
// - byte-level BPE (GPT-2, Llama 3, Qwen, SmolLM): a ByteLevel pre-tokenizer, merges by rank;
// - SentencePiece-style BPE (Llama 2, Gemma): "▁" for spaces and <0xXX> byte fallback. Its merge
//   ranks become scores (the token a merge makes scores minus its rank), which order merges as
//   the ranks do.
// Anything else (Unigram, WordPiece, normalizers or pre-tokenizers whose effect LPX cannot
// reproduce) is refused with the part at fault named.
#pragma once

#include <boost/json/object.hpp>
#include <tl/expected.hpp>

#include "metadata_table.hpp"

namespace lpx::safetensors {

// `tokenizer_config` and `config` may be NULL (files absent). Special-token ids come from
// tokenizer_config.json's bos_token/eos_token/... texts, else from config.json's *_token_id.
tl::expected<bool, std::string> read_hf_tokenizer(const boost::json::object& tokenizer,
                                                  const boost::json::object* tokenizer_config,
                                                  const boost::json::object* config,
                                                  MetadataTable& out);

}  // namespace lpx::safetensors
