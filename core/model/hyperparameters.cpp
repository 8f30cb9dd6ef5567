#include "model/hyperparameters.hpp"

#include "model/metadata_reads.hpp"

namespace lpx::core {
namespace {

std::string text(std::uint32_t v) { return std::to_string(v); }

}  // namespace

Expected<Hyperparameters> read_hyperparameters(const ModelFile& file) {
  Hyperparameters h;
  auto arch = file.get_string("general.architecture");
  if (!arch) return unexpected(arch.error());
  h.architecture = *arch;
  const std::string p = h.architecture + ".";

#define LPX_READ(target, expression)           \
  do {                                         \
    auto read_value = (expression);            \
    if (!read_value) return unexpected(read_value.error()); \
    target = *read_value;                      \
  } while (0)

  LPX_READ(h.n_layer, read_count(file, p + "block_count"));
  LPX_READ(h.n_embd, read_count(file, p + "embedding_length"));
  LPX_READ(h.n_ff, read_count(file, p + "feed_forward_length"));
  LPX_READ(h.n_head, read_count(file, p + "attention.head_count"));
  LPX_READ(h.n_head_kv, read_count(file, p + "attention.head_count_kv", h.n_head));
  LPX_READ(h.n_ctx_train, read_count(file, p + "context_length"));
  if (h.n_head % h.n_head_kv != 0) {
    return invalid_argument(p + "attention.head_count " + text(h.n_head) +
                      " is not a multiple of " + p + "attention.head_count_kv " +
                      text(h.n_head_kv));
  }
  if (!file.has(p + "attention.key_length") && h.n_embd % h.n_head != 0) {
    return invalid_argument(p + "embedding_length " + text(h.n_embd) + " is not a multiple of " + p +
                      "attention.head_count " + text(h.n_head));
  }
  LPX_READ(h.head_dim, read_count(file, p + "attention.key_length", h.n_embd / h.n_head));
  LPX_READ(h.head_dim_v, read_count(file, p + "attention.value_length", h.head_dim));
  LPX_READ(h.n_rot, read_count(file, p + "rope.dimension_count", h.head_dim));
  if (h.n_rot > h.head_dim || h.n_rot % 2 != 0) {
    return invalid_argument(p + "rope.dimension_count " + text(h.n_rot) +
                      " must be even and at most the head dimension " + text(h.head_dim));
  }
  LPX_READ(h.rope_freq_base, read_positive(file, p + "rope.freq_base", 10000.0));
  LPX_READ(h.rms_norm_eps, read_positive(file, p + "attention.layer_norm_rms_epsilon"));

  if (file.has(p + "rope.scaling.type")) {
    auto type = file.get_string(p + "rope.scaling.type");
    if (!type) return unexpected(type.error());
    if (*type == "linear") {
      h.rope_scaling = RopeScaling::linear;
    } else if (*type == "llama3") {
      h.rope_scaling = RopeScaling::llama3;
    } else if (*type != "none") {
      return unsupported(p + "rope.scaling.type '" + *type + "' is not supported (none, linear, llama3)");
    }
    if (h.rope_scaling != RopeScaling::none) {
      LPX_READ(h.rope_scaling_factor, read_positive(file, p + "rope.scaling.factor"));
    }
  }
  if (file.has(p + "expert_count")) {
    auto experts = file.get_uint(p + "expert_count");
    if (experts && *experts > 0) {
      return unsupported("mixture-of-experts models (" + p + "expert_count " +
                        std::to_string(*experts) + ") are not supported");
    }
  }
#undef LPX_READ
  return h;
}

}  // namespace lpx::core
