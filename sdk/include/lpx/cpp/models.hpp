// C++ conveniences over lpx/models.h for transports that serve several models: a handle on the
// run context's models, an asynchronous acquire that hands over an RAII lease, and a listing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lpx/cpp/engine.hpp"
#include "lpx/cpp/status.hpp"
#include "lpx/kinds/transport.h"
#include "lpx/models.h"

namespace lpx {

// A model's engine, held until the last copy of the shared_ptr that carries it goes.
class ModelLease {
 public:
  ModelLease(lpx_models* models, const lpx_models_api* api, const lpx_engine_api* engine_api,
             const lpx_model_lease& lease)
      : models_(models), api_(api), id_(lease.id), name_(lease.name ? lease.name : ""),
        load_id_(lease.load_id), engine_(lease.engine, engine_api) {
    if (lease.struct_size >= offsetof(lpx_model_lease, adapter) + sizeof lease.adapter && lease.adapter != nullptr) {
      adapter_ = lease.adapter;
    }
  }
  ~ModelLease() { api_->release(models_, id_); }
  ModelLease(const ModelLease&) = delete;
  ModelLease& operator=(const ModelLease&) = delete;

  const std::string& name() const noexcept { return name_; }
  // The LoRA adapter the acquired name selected ("MODEL:ADAPTER"), for lpx_request.adapter;
  // empty: the model alone.
  const std::string& adapter() const noexcept { return adapter_; }
  std::uint64_t load_id() const noexcept { return load_id_; }
  const EngineHandle& engine() const noexcept { return engine_; }

 private:
  lpx_models* models_;
  const lpx_models_api* api_;
  std::uint64_t id_;
  std::string name_;
  std::string adapter_;
  std::uint64_t load_id_;
  EngineHandle engine_;
};

// How an acquire ended: a lease, or the host's refusal (code, message, field) with the time
// after which trying again may succeed (LPX_ERR_UNAVAILABLE).
struct ModelAcquisition {
  std::shared_ptr<const ModelLease> lease;  // null on failure
  lpx_status_code code = LPX_OK;
  std::string message;
  std::string field;
  double retry_after_s = 0;
};

// One served model, copied out of lpx_model_entry.
struct ModelListing {
  std::string name;
  std::string path;
  lpx_model_state state = LPX_MODEL_UNLOADED;
  bool is_default = false;
  std::uint32_t context_size = 0;
  std::uint32_t leases = 0;
  std::uint64_t memory_bytes = 0;
  double idle_seconds = 0;
  std::string parent;  // a LoRA adapter's base model (name "BASE:ADAPTER"); empty for a model
};

class ModelsHandle {
 public:
  // The models of a run context; throws lpx::Error when the host gives none (a pipeline without
  // a model, or a host older than ABI 2.5).
  explicit ModelsHandle(const lpx_run_context& context) {
    if (context.struct_size < offsetof(lpx_run_context, models_api) + sizeof(void*) ||
        context.models == nullptr || context.models_api == nullptr || context.engine_api == nullptr) {
      throw Error(LPX_ERR_UNSUPPORTED, "this pipeline has no model: add a [model] table");
    }
    models_ = context.models;
    api_ = context.models_api;
    engine_api_ = context.engine_api;
  }

  // Calls `done` once with the lease of model `name` ("" = the default) or why there is none:
  // at once when the model is loaded, else from the host's loader thread when it has loaded.
  void acquire(std::string_view name, std::function<void(ModelAcquisition)> done) const {
    struct Call {
      lpx_models* models;
      const lpx_models_api* api;
      const lpx_engine_api* engine_api;
      std::function<void(ModelAcquisition)> done;
    };
    auto* call = new Call{models_, api_, engine_api_, std::move(done)};
    const std::string key(name);
    api_->acquire(models_, key.c_str(), [](void* user, const lpx_status* error, const lpx_model_lease* lease) {
      std::unique_ptr<Call> c(static_cast<Call*>(user));
      ModelAcquisition out;
      try {
        if (error == nullptr) {
          try {
            out.lease = std::make_shared<const ModelLease>(c->models, c->api, c->engine_api, *lease);
          } catch (...) {
            c->api->release(c->models, lease->id);  // no holder: give it back at once
            out.code = LPX_ERR_OUT_OF_MEMORY;
            out.message = "out of memory holding the model";
          }
        } else {
          out.code = static_cast<lpx_status_code>(error->code);
          out.message = lpx_status_message(error);
          if (const char* field = lpx_status_field(error)) out.field = field;
          out.retry_after_s = lease ? lease->retry_after_s : 0;
        }
        c->done(std::move(out));
      } catch (...) {
        // Nothing may unwind into the host; `done` reports its own failures.
      }
    }, call);
  }

  // The lease of model `name` if it is loaded now, else null; never loads it.
  std::shared_ptr<const ModelLease> acquire_if_loaded(const std::string& name) const {
    lpx_model_lease lease{};
    lease.struct_size = sizeof lease;
    if (api_->acquire_if_loaded(models_, name.c_str(), &lease) == 0) return nullptr;
    return std::make_shared<const ModelLease>(models_, api_, engine_api_, lease);
  }

  // Every served model, the default first, each followed by its adapters.
  std::vector<ModelListing> list() const {
    std::vector<ModelListing> out;
    api_->list(models_, [](void* user, const lpx_model_entry* e) {
      auto& list = *static_cast<std::vector<ModelListing>*>(user);
      try {
        const bool has_parent = e->struct_size >= offsetof(lpx_model_entry, parent) + sizeof e->parent;
        list.push_back({e->name ? e->name : "", e->path ? e->path : "",
                        static_cast<lpx_model_state>(e->state), e->is_default != 0, e->context_size,
                        e->leases, e->memory_bytes, e->idle_seconds,
                        has_parent && e->parent != nullptr ? e->parent : ""});
      } catch (...) {
        // Out of memory: the listing is shorter.
      }
    }, &out);
    return out;
  }

 private:
  lpx_models* models_ = nullptr;
  const lpx_models_api* api_ = nullptr;
  const lpx_engine_api* engine_api_ = nullptr;
};

}  // namespace lpx
