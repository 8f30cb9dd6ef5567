// config.json of a Hugging Face model: which LPX architecture it is, its hyperparameters as the
// GGUF keys the core reads ("llama.block_count", ...), and how its weights differ from GGUF's.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>
#include <tl/expected.hpp>

#include "metadata_table.hpp"

namespace lpx::safetensors {

struct HfArchitecture {
  std::string name;  // the GGUF architecture: "llama", "qwen2", "gemma3", ...
  // Llama-style models rotate adjacent pairs in GGUF but the halves of each head in Hugging Face's
  // checkpoints: q and k rows are reordered on load, as llama.cpp's converter does.
  bool permute_qk = false;
  // Gemma's RMSNorm multiplies by (1 + weight): GGUF stores the 1 + weight.
  bool norms_add_one = false;
  // Gemma 2/3: post_attention_layernorm is a post-norm, pre_feedforward_layernorm the ffn norm.
  bool gemma_norms = false;
  // Phi-3: q|k|v in one qkv_proj, gate|up in one gate_up_proj (GGUF's attn_qkv and ffn_up).
  bool fused_projections = false;
  // Tensors the config holds and GGUF keeps as weights: Phi-3's LongRoPE factors
  // (rope_factors_long/short.weight, f32).
  std::vector<std::pair<std::string, std::vector<float>>> extra_tensors;
  std::uint32_t n_head = 0;
  std::uint32_t n_head_kv = 0;
};

// Reads `config` (config.json) into `out`'s general.* and <arch>.* keys. Errors name the file
// and the field; an architecture LPX does not run is an error that lists the ones it does.
tl::expected<HfArchitecture, std::string> read_hf_config(const boost::json::object& config,
                                                         MetadataTable& out);

// The Hugging Face model types read, comma-separated (for messages and docs).
const char* supported_hf_model_types() noexcept;

}  // namespace lpx::safetensors
