// What each published minor of the plugin ABI lays out: how many bytes of the descriptor and
// of each kind's function table it defines. The host copies no more of a plugin's struct than
// its minor defines (and its struct_size says), so entries added later stay NULL and are never
// called, and it refuses a struct shorter than its minor defines.
//
// Append a row to kLayouts when a minor grows a struct, and freeze the new end below. The
// static_asserts pin every published minor's layout (as ONNX Runtime pins OrtApi): an entry
// moved, removed or re-typed breaks the build, not a plugin in the field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

#include "lpx/engine.h"
#include "lpx/models.h"
#include "lpx/lpx.h"

namespace lpx::core::abi {

// Bytes up to and including `member`.
#define LPX_END_OF(type, member) (offsetof(type, member) + sizeof(type::member))

struct Layout {
  std::uint32_t minor;
  std::size_t descriptor;
  std::size_t model_format;
  std::size_t quant_backend;
  std::size_t sampler;
  std::size_t transport;
};

inline constexpr Layout kLayouts[] = {
    // 2.0
    {0, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, draw_uniform), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.1: samplers gain bind_vocabulary
    {1, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.2: no table grows (a grammar kind, lpx_engine_info.chat_template,
    // lpx_candidates.tokens_left)
    {2, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.3: no table grows (lpx_request_result's draft counts)
    {3, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.4: no table grows (lpx_request_result.queue_ms)
    {4, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.5: no plugin table grows (the run context's models table and run record)
    {5, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, tensor_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.6: model formats gain probe_path, metadata_count and metadata_key_at
    {6, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, metadata_key_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.7: no plugin table grows (lpx_request.adapter, lpx_model_entry.parent,
    // lpx_model_lease.adapter)
    {7, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, metadata_key_at), LPX_END_OF(lpx_quant_backend_api, model_free),
     LPX_END_OF(lpx_sampler_api, bind_vocabulary), LPX_END_OF(lpx_transport_api, request_stop)},
    // 2.8: quant backends gain model_enqueue and model_wait (lpx_forward_args.previous_outputs)
    {8, LPX_END_OF(lpx_plugin_descriptor, validate_options),
     LPX_END_OF(lpx_model_format_api, metadata_key_at),
     LPX_END_OF(lpx_quant_backend_api, model_wait), LPX_END_OF(lpx_sampler_api, bind_vocabulary),
     LPX_END_OF(lpx_transport_api, request_stop)},
};

// The layout of ABI 2.`minor`; nullopt for a minor this host does not know (a newer one).
constexpr std::optional<Layout> layout_for_minor(std::uint32_t minor) {
  for (const Layout& l : kLayouts) {
    if (l.minor == minor) return l;
  }
  return std::nullopt;
}

// Copies what a plugin's struct holds into the host's zeroed one: the bytes its minor defines,
// and no more than it says it has (callers refuse a struct shorter than its minor first) nor
// than the host's struct holds. Bytes the plugin's minor does not define stay zero: the
// entries added later read as NULL and are never called.
inline void copy_defined(const void* plugin, std::size_t plugin_size, std::size_t defined,
                         void* host, std::size_t host_size) {
  std::size_t n = defined < plugin_size ? defined : plugin_size;
  n = n < host_size ? n : host_size;
  std::memcpy(host, plugin, n);
}

// The bytes of `kind`'s table that `layout` defines.
constexpr std::size_t kind_table_size(const Layout& layout, lpx_plugin_kind kind) {
  switch (kind) {
    case LPX_KIND_MODEL_FORMAT: return layout.model_format;
    case LPX_KIND_QUANT_BACKEND: return layout.quant_backend;
    case LPX_KIND_SAMPLER: return layout.sampler;
    case LPX_KIND_TRANSPORT: return layout.transport;
  }
  return 0;
}

static_assert(LPX_ABI_MAJOR == 2, "a new major starts kLayouts afresh");
static_assert(sizeof(kLayouts) / sizeof(kLayouts[0]) == LPX_ABI_MINOR + 1,
              "every minor up to LPX_ABI_MINOR has its row in kLayouts");
static_assert(kLayouts[LPX_ABI_MINOR].descriptor == sizeof(lpx_plugin_descriptor) &&
                  kLayouts[LPX_ABI_MINOR].model_format == sizeof(lpx_model_format_api) &&
                  kLayouts[LPX_ABI_MINOR].quant_backend == sizeof(lpx_quant_backend_api) &&
                  kLayouts[LPX_ABI_MINOR].sampler == sizeof(lpx_sampler_api) &&
                  kLayouts[LPX_ABI_MINOR].transport == sizeof(lpx_transport_api),
              "the newest row of kLayouts is the whole of every struct");

// 2.0, frozen (LP64). The descriptor by byte offsets; a table's entries by their place after
// the leading struct_size (padded to a pointer).
static_assert(sizeof(void*) == 8, "the frozen layouts below are those of 64-bit targets");
static_assert(offsetof(lpx_plugin_descriptor, options) == 48 &&
                  offsetof(lpx_plugin_descriptor, init) == 80 &&
                  offsetof(lpx_plugin_descriptor, kind_api) == 120 &&
                  offsetof(lpx_plugin_descriptor, validate_options) == 128,
              "the 2.0 descriptor cannot change");
constexpr std::size_t entry_index(std::size_t offset) {
  return (offset - sizeof(void*)) / sizeof(void*);
}
static_assert(entry_index(offsetof(lpx_model_format_api, tensor_at)) == 6,
              "the 2.0 model-format table cannot change");
static_assert(entry_index(offsetof(lpx_model_format_api, probe_path)) == 7 &&
                  entry_index(offsetof(lpx_model_format_api, metadata_key_at)) == 9,
              "the 2.6 model-format table cannot change");
static_assert(entry_index(offsetof(lpx_quant_backend_api, attention)) == 8 &&
                  entry_index(offsetof(lpx_quant_backend_api, model_features)) == 9 &&
                  entry_index(offsetof(lpx_quant_backend_api, model_free)) == 12,
              "the 2.0 quant-backend table cannot change");
static_assert(entry_index(offsetof(lpx_quant_backend_api, model_enqueue)) == 13 &&
                  entry_index(offsetof(lpx_quant_backend_api, model_wait)) == 14,
              "the 2.8 quant-backend table cannot change");
static_assert(entry_index(offsetof(lpx_sampler_api, draw_uniform)) == 6,
              "the 2.0 sampler table cannot change");
static_assert(entry_index(offsetof(lpx_sampler_api, bind_vocabulary)) == 7,
              "the 2.1 sampler table cannot change");
static_assert(entry_index(offsetof(lpx_transport_api, request_stop)) == 1,
              "the 2.0 transport table cannot change");

// The structs passed across that carry their own size grow only at their end: their 2.0 ends
// are frozen here (a field appended later is read only when struct_size covers it).
static_assert(sizeof(lpx_status) == 40 && offsetof(lpx_status, field) == 32,
              "the 2.0 status cannot change");
static_assert(sizeof(lpx_rope_params) == 40 && offsetof(lpx_rope_params, attn_factor) == 32,
              "the 2.0 rope params cannot change");
static_assert(sizeof(lpx_attention_args) == 96 && offsetof(lpx_attention_args, softcap) == 88,
              "the 2.0 attention args cannot change");
static_assert(sizeof(lpx_transformer_layer) == 160 &&
                  offsetof(lpx_transformer_layer, rope) == 8 &&
                  offsetof(lpx_transformer_layer, post_ffn_norm) == 152,
              "the 2.0 transformer layer cannot change");
static_assert(offsetof(lpx_transformer_desc, layers) == 112 &&
                  offsetof(lpx_transformer_desc, max_context) == 140,
              "the 2.0 transformer description cannot change");
static_assert(offsetof(lpx_forward_args, sampling) == 80 &&
                  offsetof(lpx_forward_args, previous_outputs) == 88,
              "the 2.0 forward args and their 2.8 previous_outputs cannot change");
static_assert(offsetof(lpx_sampling_overrides, logit_bias_count) == 96 &&
                  offsetof(lpx_sampling_overrides, grammar) == 104 &&
                  offsetof(lpx_sampling_overrides, grammar_kind) == 112,
              "the 2.0 sampling overrides and their 2.1 grammar cannot change");
static_assert(sizeof(lpx_vocabulary) == 48, "the 2.1 vocabulary cannot change");
static_assert(offsetof(lpx_request, flags) == 120 && offsetof(lpx_request, messages_json) == 128 &&
                  offsetof(lpx_request, tools_json) == 136 && offsetof(lpx_request, adapter) == 144,
              "the 2.0 request, its 2.1 messages_json and tools_json and its 2.7 adapter cannot change");
static_assert(offsetof(lpx_model_entry, idle_seconds) == 48 && offsetof(lpx_model_entry, parent) == 56 &&
                  offsetof(lpx_model_lease, retry_after_s) == 40 && offsetof(lpx_model_lease, adapter) == 48,
              "the 2.5 model entry and lease and their 2.7 parent and adapter cannot change");
static_assert(offsetof(lpx_candidates, has_probabilities) == 28 && offsetof(lpx_candidates, tokens_left) == 32,
              "the 2.0 candidates and their 2.2 tokens_left cannot change");
static_assert(offsetof(lpx_engine_stats, steps) == 40 && offsetof(lpx_engine_stats, prefix_cache_hits) == 48 &&
                  offsetof(lpx_engine_stats, spec_draft_tokens) == 80 &&
                  offsetof(lpx_engine_stats, steps_queued_behind) == 96,
              "the 2.0 engine stats, their 2.2 prefix-cache and speculative counters and their 2.8 "
              "queued steps cannot change");
static_assert(offsetof(lpx_run_context, host_commit) == 64 && offsetof(lpx_run_context, models) == 72 &&
                  offsetof(lpx_run_context, run_record_json) == 88,
              "the 2.0 run context and its 2.5 models and run record cannot change");
static_assert(offsetof(lpx_engine_info, backend) == 40 && offsetof(lpx_engine_info, chat_template) == 48,
              "the 2.0 engine info and its 2.2 chat_template cannot change");

#undef LPX_END_OF

}  // namespace lpx::core::abi
