// The shape of a transformer as a model file declares it, read and checked for consistency.
#pragma once

#include <cstdint>
#include <string>

#include "model/model_file.hpp"
#include "util/expected.hpp"

namespace lpx::core {

enum class RopeScaling { none, linear, llama3 };

struct Hyperparameters {
  std::string architecture;        // general.architecture, e.g. "llama"
  std::uint32_t n_layer = 0;       // {arch}.block_count
  std::uint32_t n_embd = 0;        // {arch}.embedding_length
  std::uint32_t n_ff = 0;          // {arch}.feed_forward_length
  std::uint32_t n_head = 0;        // {arch}.attention.head_count
  std::uint32_t n_head_kv = 0;     // {arch}.attention.head_count_kv (default n_head)
  std::uint32_t head_dim = 0;      // {arch}.attention.key_length (default n_embd / n_head)
  std::uint32_t head_dim_v = 0;    // {arch}.attention.value_length (default head_dim)
  std::uint32_t n_rot = 0;         // {arch}.rope.dimension_count (default head_dim)
  std::uint32_t n_ctx_train = 0;   // {arch}.context_length
  std::uint32_t n_vocab = 0;       // rows of token_embd.weight
  double rope_freq_base = 10000.0;
  RopeScaling rope_scaling = RopeScaling::none;
  double rope_scaling_factor = 1.0;
  double rms_norm_eps = 0.0;       // {arch}.attention.layer_norm_rms_epsilon
  bool tied_output = false;        // no output.weight: the embedding doubles as output head

  // Parameters counted from the tensor shapes.
  std::uint64_t n_params = 0;
};

// Reads `{arch}.*` hyperparameters and checks them against each other (head counts divide, rope
// dimensions fit the head, ...). Errors name the key and values.
Expected<Hyperparameters> read_hyperparameters(const ModelFile& file);

}  // namespace lpx::core
