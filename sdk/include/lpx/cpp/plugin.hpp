// Header-only C++ wrapper for writing LPX plugins.
//
//   class Greedy final : public lpx::Sampler {
//    public:
//     explicit Greedy(const lpx::Options&) {}
//     void apply(lpx::SamplerState*, lpx_candidates& c) override { ... }
//   };
//   LPX_PLUGIN_ENTRY() {
//     return lpx::describe<Greedy>({.name = "greedy", .version = "1.0.0", .license = "MIT",
//                                   .description = "Pick the most likely token"});
//   }
//
// The instance class is constructed from its options in `create` and deleted in `destroy`; it may
// also declare `static void validate(const lpx::Options&)` for checks across options. Every
// call from the host goes through a noexcept trampoline that turns exceptions into statuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "lpx/cpp/host.hpp"
#include "lpx/cpp/options.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/lpx.h"

// Defines the one exported entry point. Follow it with a body returning lpx::describe<...>(...).
#define LPX_PLUGIN_ENTRY() \
  extern "C" LPX_PLUGIN_EXPORT const lpx_plugin_descriptor* lpx_plugin_entry(void)

namespace lpx {

// Base of every instance class.
class Instance {
 public:
  virtual ~Instance() = default;
};

// --- kinds ---------------------------------------------------------------------------------------

// Per-sequence memory of a sampler; derive from it for RNGs, penalty history...
class SamplerState {
 public:
  virtual ~SamplerState() = default;
};

class Sampler : public Instance {
 public:
  // Stateless samplers keep the default.
  virtual std::unique_ptr<SamplerState> make_state(std::uint64_t /*seed*/) { return nullptr; }
  // Transform and/or select on the candidates (see lpx/kinds/sampler.h). Must not allocate.
  virtual void apply(SamplerState* state, lpx_candidates& candidates) = 0;
  virtual void accept(SamplerState* /*state*/, std::int32_t /*token*/) noexcept {}
  virtual void reset(SamplerState* /*state*/) noexcept {}
  // True, with `op` filled, when apply() is exactly that standard operation (see
  // lpx/kinds/sampling_program.h): the link may then run on a device as part of a program.
  virtual bool standard_op(lpx_sampling_op& /*op*/) const noexcept { return false; }
  // For LPX_SAMPLING_DIST links: advances the state as one apply() would and returns the
  // uniform it would have drawn.
  virtual double draw_uniform(SamplerState* /*state*/) noexcept { return 0.0; }
  // The model's vocabulary, once, before any state or apply (lpx_vocabulary: copy what you
  // keep). Links that do not read text keep the default.
  virtual void bind_vocabulary(const lpx_vocabulary& /*vocabulary*/) {}
};

class Transport : public Instance {
 public:
  // Serve until done or stopped; throw to report failure.
  virtual void run(const lpx_run_context& context) = 0;
  // Thread-safe, non-blocking, idempotent.
  virtual void request_stop() noexcept = 0;
};

// An opened model file (see lpx/kinds/model_format.h): read-only after open, any thread.
class Model {
 public:
  virtual ~Model() = default;
  // The metadata value under `key`, or nothing when the file has no such key.
  virtual std::optional<lpx_metadata_value> find(const char* key) const = 0;
  // Element `index` of the array under `key`; throws lpx::Error when there is none.
  virtual lpx_metadata_value array_element(const char* key, std::uint64_t index) const = 0;
  virtual std::uint64_t tensor_count() const noexcept = 0;
  // Tensor `index` in file order; throws lpx::Error when out of range.
  virtual lpx_tensor_view tensor(std::uint64_t index) const = 0;
  // Every metadata key in file order; the strings live as long as the model. The default lists
  // none (the host then cannot convert the model).
  virtual const std::vector<const char*>& metadata_keys() const {
    static const std::vector<const char*> kNone;
    return kNone;
  }
};

class ModelFormat : public Instance {
 public:
  // 0 (not this format) to 100 (certain), from the first bytes of a file.
  virtual std::int32_t probe(const std::uint8_t* head, std::size_t length) const noexcept = 0;
  // 0 to 100 from a path, file or directory (formats whose model is a directory override it).
  virtual std::int32_t probe_path(const char* /*path*/) const noexcept { return 0; }
  // Opens and fully validates `path`; throws lpx::Error with the reason.
  virtual std::unique_ptr<Model> open(const char* path) = 0;
};

// Tensor kernels of one device (see lpx/kinds/quant_backend.h). One engine thread at a time.
class QuantBackend : public Instance {
 public:
  virtual bool supports_type(std::int32_t type) const noexcept = 0;
  // y[b][r] = sum_c W[r][c] * x[b][c]; must not allocate once warmed up.
  virtual void matmul(const lpx_tensor_view& weight, const float* x, float* y,
                      std::size_t batch) = 0;
  virtual void dequantize_row(const lpx_tensor_view& weight, std::int64_t row, float* out) = 0;
  // The rest of a decode step. See lpx/kinds/quant_backend.h for the contracts.
  virtual void reserve(const lpx_backend_limits& limits) = 0;
  virtual void rms_norm(const float* x, const float* weight, float* out, std::size_t rows,
                        std::size_t n, float eps) = 0;
  virtual void rope(float* x, std::size_t rows, std::size_t heads, std::size_t head_dim,
                    const std::int32_t* positions, const lpx_rope_params& params) = 0;
  virtual void swiglu(const float* gate, const float* up, float* out, std::size_t n) = 0;
  virtual void geglu(const float* gate, const float* up, float* out, std::size_t n) = 0;
  virtual void attention(const lpx_attention_args& args) = 0;
  // The lpx_model_feature bits this backend runs (lpx/kinds/transformer.h).
  virtual std::uint64_t model_features() const noexcept = 0;
};

// A backend with its own device memory that runs whole forward steps there
// (see model_load in lpx/kinds/quant_backend.h). Derive from it instead of QuantBackend; the
// table then carries the model_* entries. A DeviceModel is owned by the host between
// load_model and its model_free.
class DeviceModel {
 public:
  virtual ~DeviceModel() = default;
  // One step; its outputs are written when it returns.
  virtual void forward(const lpx_forward_args& args) = 0;
  // Queued steps (ABI 2.8, model_enqueue / model_wait). They are called only within the
  // contract, which the table functions check first (run_step, queue_step, complete_step):
  // argmax set and logits NULL, fewer than two steps queued, previous_outputs naming outputs
  // of the step queued just before. The defaults run the step at once, inside enqueue, with
  // the picks the previous one kept for previous_outputs; a device that can queue overrides
  // both, takes those picks from its own memory and declares the capability "queued-steps".
  virtual void enqueue(const lpx_forward_args& args);
  virtual void wait() {}

  // The table functions' entry points: the contract's checks, then the functions above.
  void run_step(const lpx_forward_args& args);
  void queue_step(const lpx_forward_args& args);
  void complete_step();

 private:
  int queued_ = 0;                    // steps queued and not yet completed
  std::uint32_t previous_count_ = 0;  // outputs previous_outputs may name (0: none)
  std::vector<std::int32_t> picks_;   // the defaults' copy of the previous step's picks
  std::vector<std::int32_t> tokens_;  // the defaults' tokens with previous picks put in
};

// The forward arguments' previous_outputs, or NULL where the host's struct predates 2.8: what
// a DeviceModel overriding enqueue reads.
inline const std::int32_t* previous_outputs(const lpx_forward_args& args) noexcept {
  return args.struct_size >= offsetof(lpx_forward_args, previous_outputs) + sizeof(void*)
             ? args.previous_outputs
             : nullptr;
}

inline void DeviceModel::run_step(const lpx_forward_args& args) {
  if (queued_ > 0) {
    throw Error(LPX_ERR_CONFLICT, "model_forward: a queued step is not complete (model_wait)");
  }
  if (previous_outputs(args) != nullptr) {
    throw Error(LPX_ERR_INVALID_ARGUMENT, "model_forward: previous_outputs is for model_enqueue");
  }
  previous_count_ = 0;  // previous_outputs name the step queued just before
  forward(args);
}

inline void DeviceModel::queue_step(const lpx_forward_args& args) {
  if (args.argmax == nullptr || args.logits != nullptr) {
    throw Error(LPX_ERR_INVALID_ARGUMENT,
                "model_enqueue: a queued step returns token ids only (argmax set, logits NULL)");
  }
  if (queued_ >= 2) {
    throw Error(LPX_ERR_CONFLICT, "model_enqueue: two steps are queued already (model_wait)");
  }
  if (const std::int32_t* previous = previous_outputs(args)) {
    for (std::uint32_t r = 0; r < args.n_rows; ++r) {
      if (previous[r] < -1) {
        throw Error(LPX_ERR_INVALID_ARGUMENT, "model_enqueue: row " + std::to_string(r) +
                                                  " has previous output " +
                                                  std::to_string(previous[r]) + " (-1 or >= 0)");
      }
      if (previous[r] >= static_cast<std::int64_t>(previous_count_)) {
        throw Error(LPX_ERR_INVALID_ARGUMENT,
                    "model_enqueue: row " + std::to_string(r) + " takes output " +
                        std::to_string(previous[r]) + " of the previous step, which " +
                        (previous_count_ == 0 ? std::string("was not a queued step with picks")
                                              : "had " + std::to_string(previous_count_)));
      }
    }
  }
  previous_count_ = 0;
  enqueue(args);
  ++queued_;
  previous_count_ = args.n_outputs;
}

inline void DeviceModel::complete_step() {
  if (queued_ == 0) throw Error(LPX_ERR_CONFLICT, "model_wait: no step is queued");
  --queued_;
  try {
    wait();
  } catch (...) {
    previous_count_ = 0;  // a failed step's picks are no one's input
    throw;
  }
}

inline void DeviceModel::enqueue(const lpx_forward_args& args) {
  lpx_forward_args step = args;
  step.previous_outputs = nullptr;
  if (const std::int32_t* previous = previous_outputs(args)) {
    tokens_.assign(args.tokens, args.tokens + args.n_rows);
    for (std::uint32_t r = 0; r < args.n_rows; ++r) {
      if (previous[r] >= 0) tokens_[r] = picks_[static_cast<std::size_t>(previous[r])];
    }
    step.tokens = tokens_.data();
  }
  forward(step);
  picks_.assign(args.argmax, args.argmax + args.n_outputs);
}

class DeviceBackend : public QuantBackend {
 public:
  // Throws lpx::Error (LPX_ERR_UNSUPPORTED, LPX_ERR_OUT_OF_MEMORY...) with the reason.
  // Refuses what it cannot run before allocating anything.
  virtual std::unique_ptr<DeviceModel> load_model(const lpx_transformer_desc& desc,
                                                  lpx_device_model_info& info) = 0;
};

// --- describing a plugin ------------------------------------------------------------------------

struct PluginInfo {
  const char* name = nullptr;
  const char* version = nullptr;
  const char* license = nullptr;
  const char* description = nullptr;
  std::span<const lpx_option_spec> options{};
  std::span<const char* const> capabilities{};
};

namespace detail {

template <class T>
T& self(lpx_instance* instance) noexcept {
  return static_cast<T&>(*reinterpret_cast<Instance*>(instance));
}

inline lpx_status* init(const lpx_host_api* host, lpx_plugin_state** out_state) noexcept {
  host_slot() = host;
  *out_state = nullptr;
  return nullptr;
}
inline void shutdown(lpx_plugin_state*) noexcept { host_slot() = nullptr; }

template <class T>
lpx_status* create(lpx_plugin_state*, const lpx_options* options,
                   lpx_instance** out_instance) noexcept {
  return guard([&] {
    Instance* instance = new T(Options(options));
    *out_instance = reinterpret_cast<lpx_instance*>(instance);
  });
}
inline void destroy(lpx_instance* instance) noexcept {
  delete reinterpret_cast<Instance*>(instance);
}

// Sampler trampolines.
inline SamplerState* state_of(lpx_sampler_state* state) noexcept {
  return reinterpret_cast<SamplerState*>(state);
}
inline lpx_status* sampler_state_create(lpx_instance* instance, std::uint64_t seed,
                                        lpx_sampler_state** out_state) noexcept {
  return guard([&] {
    *out_state = reinterpret_cast<lpx_sampler_state*>(
        self<Sampler>(instance).make_state(seed).release());
  });
}
inline void sampler_state_destroy(lpx_sampler_state* state) noexcept { delete state_of(state); }
inline lpx_status* sampler_apply(lpx_instance* instance, lpx_sampler_state* state,
                                 lpx_candidates* candidates) noexcept {
  return guard([&] { self<Sampler>(instance).apply(state_of(state), *candidates); });
}
inline void sampler_accept(lpx_instance* instance, lpx_sampler_state* state,
                           std::int32_t token) noexcept {
  self<Sampler>(instance).accept(state_of(state), token);
}
inline void sampler_reset(lpx_instance* instance, lpx_sampler_state* state) noexcept {
  self<Sampler>(instance).reset(state_of(state));
}
inline std::int32_t sampler_standard_op(lpx_instance* instance, lpx_sampling_op* op) noexcept {
  return self<Sampler>(instance).standard_op(*op) ? 1 : 0;
}
inline double sampler_draw_uniform(lpx_instance* instance, lpx_sampler_state* state) noexcept {
  return self<Sampler>(instance).draw_uniform(state_of(state));
}
inline lpx_status* sampler_bind_vocabulary(lpx_instance* instance,
                                           const lpx_vocabulary* vocabulary) noexcept {
  return guard([&] { self<Sampler>(instance).bind_vocabulary(*vocabulary); });
}
inline constexpr lpx_sampler_api kSamplerApi{
    sizeof(lpx_sampler_api), &sampler_state_create, &sampler_state_destroy,
    &sampler_apply,          &sampler_accept,       &sampler_reset,
    &sampler_standard_op,    &sampler_draw_uniform, &sampler_bind_vocabulary};

// Transport trampolines.
inline lpx_status* transport_run(lpx_instance* instance, const lpx_run_context* context) noexcept {
  return guard([&] { self<Transport>(instance).run(*context); });
}
inline void transport_request_stop(lpx_instance* instance) noexcept {
  self<Transport>(instance).request_stop();
}
inline constexpr lpx_transport_api kTransportApi{sizeof(lpx_transport_api), &transport_run,
                                                 &transport_request_stop};

// An instance class may declare `static void validate(const lpx::Options&)` (throwing lpx::Error
// whose message starts with "option_name: ") for checks across options; see validate_options.
template <class T>
concept HasValidate = requires(const Options& options) { T::validate(options); };

template <class T>
lpx_status* validate_options(lpx_plugin_state*, const lpx_options* options) noexcept {
  return guard([&] { T::validate(Options(options)); });
}

template <class T>
constexpr auto validate_entry_of() {
  if constexpr (HasValidate<T>) {
    return &validate_options<T>;
  } else {
    return static_cast<lpx_status* (*)(lpx_plugin_state*, const lpx_options*)>(nullptr);
  }
}

// Model-format trampolines.
inline const Model& model_of(const lpx_model* model) noexcept {
  return *reinterpret_cast<const Model*>(model);
}
inline std::int32_t format_probe(lpx_instance* instance, const std::uint8_t* head,
                                 size_t length) noexcept {
  return self<ModelFormat>(instance).probe(head, length);
}
inline std::int32_t format_probe_path(lpx_instance* instance, const char* path) noexcept {
  return self<ModelFormat>(instance).probe_path(path);
}
inline lpx_status* format_open(lpx_instance* instance, const char* path,
                               lpx_model** out_model) noexcept {
  return guard([&] {
    *out_model = reinterpret_cast<lpx_model*>(self<ModelFormat>(instance).open(path).release());
  });
}
inline void format_close(lpx_model* model) noexcept { delete reinterpret_cast<Model*>(model); }
inline lpx_status* format_metadata_find(const lpx_model* model, const char* key,
                                        lpx_metadata_value* out_value) noexcept {
  return guard([&] {
    auto value = model_of(model).find(key);
    if (!value) throw Error(LPX_ERR_NOT_FOUND, std::string("no metadata key '") + key + "'");
    *out_value = *value;
  });
}
inline lpx_status* format_metadata_array_at(const lpx_model* model, const char* key,
                                            std::uint64_t index,
                                            lpx_metadata_value* out_value) noexcept {
  return guard([&] { *out_value = model_of(model).array_element(key, index); });
}
inline std::uint64_t format_tensor_count(const lpx_model* model) noexcept {
  return model_of(model).tensor_count();
}
inline lpx_status* format_tensor_at(const lpx_model* model, std::uint64_t index,
                                    lpx_tensor_view* out_view) noexcept {
  return guard([&] { *out_view = model_of(model).tensor(index); });
}
inline std::uint64_t format_metadata_count(const lpx_model* model) noexcept {
  try {
    return model_of(model).metadata_keys().size();
  } catch (...) {
    return 0;
  }
}
inline lpx_status* format_metadata_key_at(const lpx_model* model, std::uint64_t index,
                                          const char** out_key) noexcept {
  return guard([&] {
    const auto& keys = model_of(model).metadata_keys();
    if (index >= keys.size()) throw Error(LPX_ERR_INVALID_ARGUMENT, "no metadata key " + std::to_string(index));
    *out_key = keys[index];
  });
}
inline constexpr lpx_model_format_api kModelFormatApi{
    sizeof(lpx_model_format_api), &format_probe,           &format_open,
    &format_close,                &format_metadata_find,   &format_metadata_array_at,
    &format_tensor_count,         &format_tensor_at,       &format_probe_path,
    &format_metadata_count,       &format_metadata_key_at};

// Quantization-backend trampolines.
inline std::int32_t backend_supports_type(lpx_instance* instance, std::int32_t type) noexcept {
  return self<QuantBackend>(instance).supports_type(type) ? 1 : 0;
}
inline lpx_status* backend_matmul(lpx_instance* instance, const lpx_tensor_view* weight,
                                  const float* x, float* y, size_t batch) noexcept {
  return guard([&] { self<QuantBackend>(instance).matmul(*weight, x, y, batch); });
}
inline lpx_status* backend_dequantize_row(lpx_instance* instance, const lpx_tensor_view* weight,
                                          std::int64_t row, float* out) noexcept {
  return guard([&] { self<QuantBackend>(instance).dequantize_row(*weight, row, out); });
}
inline lpx_status* backend_reserve(lpx_instance* instance,
                                   const lpx_backend_limits* limits) noexcept {
  return guard([&] { self<QuantBackend>(instance).reserve(*limits); });
}
inline lpx_status* backend_rms_norm(lpx_instance* instance, const float* x, const float* weight,
                                    float* out, size_t rows, size_t n, float eps) noexcept {
  return guard([&] { self<QuantBackend>(instance).rms_norm(x, weight, out, rows, n, eps); });
}
inline lpx_status* backend_rope(lpx_instance* instance, float* x, size_t rows, size_t heads,
                                size_t head_dim, const std::int32_t* positions,
                                const lpx_rope_params* params) noexcept {
  return guard(
      [&] { self<QuantBackend>(instance).rope(x, rows, heads, head_dim, positions, *params); });
}
inline lpx_status* backend_swiglu(lpx_instance* instance, const float* gate, const float* up,
                                  float* out, size_t n) noexcept {
  return guard([&] { self<QuantBackend>(instance).swiglu(gate, up, out, n); });
}
inline lpx_status* backend_geglu(lpx_instance* instance, const float* gate, const float* up,
                                 float* out, size_t n) noexcept {
  return guard([&] { self<QuantBackend>(instance).geglu(gate, up, out, n); });
}
inline std::uint64_t backend_model_features(lpx_instance* instance) noexcept {
  return self<QuantBackend>(instance).model_features();
}
inline lpx_status* backend_attention(lpx_instance* instance,
                                     const lpx_attention_args* args) noexcept {
  return guard([&] { self<QuantBackend>(instance).attention(*args); });
}
inline lpx_status* backend_model_load(lpx_instance* instance, const lpx_transformer_desc* desc,
                                      lpx_device_model** out_model,
                                      lpx_device_model_info* out_info) noexcept {
  return guard([&] {
    std::unique_ptr<DeviceModel> model = self<DeviceBackend>(instance).load_model(*desc, *out_info);
    *out_model = reinterpret_cast<lpx_device_model*>(model.release());
  });
}
inline lpx_status* backend_model_forward(lpx_instance*, lpx_device_model* model,
                                         const lpx_forward_args* args) noexcept {
  return guard([&] { reinterpret_cast<DeviceModel*>(model)->run_step(*args); });
}
inline void backend_model_free(lpx_instance*, lpx_device_model* model) noexcept {
  delete reinterpret_cast<DeviceModel*>(model);
}
inline lpx_status* backend_model_enqueue(lpx_instance*, lpx_device_model* model,
                                         const lpx_forward_args* args) noexcept {
  return guard([&] { reinterpret_cast<DeviceModel*>(model)->queue_step(*args); });
}
inline lpx_status* backend_model_wait(lpx_instance*, lpx_device_model* model) noexcept {
  return guard([&] { reinterpret_cast<DeviceModel*>(model)->complete_step(); });
}
inline constexpr lpx_quant_backend_api kQuantBackendApi{
    sizeof(lpx_quant_backend_api), &backend_supports_type,  &backend_matmul,
    &backend_dequantize_row,       &backend_reserve,        &backend_rms_norm,
    &backend_rope,                 &backend_swiglu,         &backend_geglu,
    &backend_attention,            &backend_model_features, nullptr,
    nullptr,                       nullptr,                 nullptr,
    nullptr};
inline constexpr lpx_quant_backend_api kDeviceBackendApi{
    sizeof(lpx_quant_backend_api), &backend_supports_type,  &backend_matmul,
    &backend_dequantize_row,       &backend_reserve,        &backend_rms_norm,
    &backend_rope,                 &backend_swiglu,         &backend_geglu,
    &backend_attention,            &backend_model_features, &backend_model_load,
    &backend_model_forward,        &backend_model_free,     &backend_model_enqueue,
    &backend_model_wait};

template <class T>
constexpr lpx_plugin_kind kind_of() {
  if constexpr (std::is_base_of_v<Sampler, T>) {
    return LPX_KIND_SAMPLER;
  } else if constexpr (std::is_base_of_v<ModelFormat, T>) {
    return LPX_KIND_MODEL_FORMAT;
  } else if constexpr (std::is_base_of_v<QuantBackend, T>) {
    return LPX_KIND_QUANT_BACKEND;
  } else {
    static_assert(std::is_base_of_v<Transport, T>,
                  "an LPX plugin class derives from lpx::Sampler, lpx::ModelFormat, "
                  "lpx::QuantBackend or lpx::Transport");
    return LPX_KIND_TRANSPORT;
  }
}

template <class T>
constexpr const void* kind_api_of() {
  if constexpr (kind_of<T>() == LPX_KIND_SAMPLER) {
    return &kSamplerApi;
  } else if constexpr (kind_of<T>() == LPX_KIND_MODEL_FORMAT) {
    return &kModelFormatApi;
  } else if constexpr (std::is_base_of_v<DeviceBackend, T>) {
    return &kDeviceBackendApi;
  } else if constexpr (kind_of<T>() == LPX_KIND_QUANT_BACKEND) {
    return &kQuantBackendApi;
  } else {
    return &kTransportApi;
  }
}

}  // namespace detail

// The descriptor of a plugin whose instances are `T`. `info`'s strings and spans must be static.
// The descriptor is built on the first call and returned by every later one.
template <class T>
const lpx_plugin_descriptor* describe(const PluginInfo& info) noexcept {
  static const lpx_plugin_descriptor descriptor{
      LPX_ABI_MAJOR,
      LPX_ABI_MINOR,
      sizeof(lpx_plugin_descriptor),
      detail::kind_of<T>(),
      info.name,
      info.version,
      info.license,
      info.description,
      info.options.data(),
      static_cast<std::uint32_t>(info.options.size()),
      sizeof(lpx_option_spec),
      info.capabilities.data(),
      static_cast<std::uint32_t>(info.capabilities.size()),
      &detail::init,
      &detail::shutdown,
      nullptr,
      &detail::create<T>,
      &detail::destroy,
      detail::kind_api_of<T>(),
      detail::validate_entry_of<T>(),
  };
  return &descriptor;
}

}  // namespace lpx
