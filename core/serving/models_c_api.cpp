#include "serving/models_c_api.hpp"

#include <cstddef>
#include <exception>
#include <optional>
#include <string_view>

#include <spdlog/spdlog.h>

#include "lpx/cpp/status.hpp"

namespace lpx::core {
namespace {

ModelPool& self(lpx_models* models) noexcept { return *reinterpret_cast<ModelPool*>(models); }

// `adapters`: whether the caller reads what 2.7 added (lpx_model_entry.parent,
// lpx_model_lease.adapter). A transport built before cannot pass an adapter on to its requests:
// it is not shown the adapters, and a name that selects one is refused rather than answered by
// the model alone.
template <bool adapters>
void list(lpx_models* models, void (*visit)(void*, const lpx_model_entry*), void* user) noexcept {
  if (models == nullptr || visit == nullptr) return;
  try {
    self(models).list([&](const lpx_model_entry& entry) {
      if (adapters || entry.parent == nullptr) visit(user, &entry);
    });
  } catch (const std::exception& e) {
    spdlog::error("models.list: {}", e.what());
  }
}

Status adapter_unreadable(const Lease& lease) {
  return Status(LPX_ERR_UNSUPPORTED,
                "'" + *lease.name + ":" + *lease.adapter + "' selects a LoRA adapter, which this transport (built "
                "for an ABI before 2.7) cannot pass on to its requests: rebuild it against SDK 2.7",
                "model");
}

// The callback's view of an acquire's outcome; the status lives during the call only.
void report(lpx_model_acquired on_acquired, void* user, const Expected<Lease>& lease,
            double retry_after_s) noexcept {
  lpx_model_lease out{};
  out.struct_size = sizeof out;
  if (lease) {
    out.id = lease->id;
    out.engine = lease->engine;
    out.name = lease->name->c_str();
    out.load_id = lease->load_id;
    out.adapter = lease->adapter != nullptr ? lease->adapter->c_str() : nullptr;
    on_acquired(user, nullptr, &out);
    return;
  }
  out.retry_after_s = retry_after_s;
  const Status& error = lease.error();
  lpx_status* status = make_status(error.code, error.message.c_str(),
                                   error.field.empty() ? nullptr : error.field.c_str());
  on_acquired(user, status, &out);
  lpx_status_release(status);
}

template <bool adapters>
void acquire(lpx_models* models, const char* name, lpx_model_acquired on_acquired, void* user) noexcept {
  if (on_acquired == nullptr) return;
  if (models == nullptr) {
    report(on_acquired, user, internal_error(std::string("models.acquire: NULL models")), 0);
    return;
  }
  try {
    self(models).acquire(name ? std::string_view(name) : std::string_view(),
                         [models, on_acquired, user](Expected<Lease> lease, double retry_after_s) {
                           if (!adapters && lease && lease->adapter != nullptr) {
                             const Status refusal = adapter_unreadable(*lease);
                             self(models).release(lease->id);
                             report(on_acquired, user, Expected<Lease>(unexpected(refusal)), 0);
                             return;
                           }
                           report(on_acquired, user, lease, retry_after_s);
                         });
  } catch (const std::exception& e) {
    report(on_acquired, user, internal_error(std::string("models.acquire: ") + e.what()), 0);
  }
}

void release(lpx_models* models, uint64_t lease_id) noexcept {
  if (models == nullptr) return;
  try {
    self(models).release(lease_id);
  } catch (const std::exception& e) {
    spdlog::error("models.release: {}", e.what());
  }
}

int32_t acquire_if_loaded(lpx_models* models, const char* name, lpx_model_lease* out) noexcept {
  // A 2.5 transport's lease ends before `adapter`.
  if (models == nullptr || out == nullptr || out->struct_size < offsetof(lpx_model_lease, adapter)) return 0;
  try {
    const std::optional<Lease> lease = self(models).acquire_if_loaded(name ? name : "");
    if (!lease) return 0;
    if (lease->adapter != nullptr && out->struct_size < sizeof(lpx_model_lease)) {  // it could not say which
      self(models).release(lease->id);
      return 0;
    }
    out->id = lease->id;
    out->engine = lease->engine;
    out->name = lease->name->c_str();
    out->load_id = lease->load_id;
    out->retry_after_s = 0;
    if (out->struct_size >= sizeof(lpx_model_lease)) {
      out->adapter = lease->adapter != nullptr ? lease->adapter->c_str() : nullptr;
    }
    return 1;
  } catch (const std::exception& e) {
    spdlog::error("models.acquire_if_loaded: {}", e.what());
    return 0;
  }
}

}  // namespace

const lpx_models_api& models_c_api(std::uint32_t caller_abi_minor) noexcept {
  static const lpx_models_api current{sizeof(lpx_models_api), &list<true>, &acquire<true>, &release,
                                      &acquire_if_loaded};
  static const lpx_models_api before_adapters{sizeof(lpx_models_api), &list<false>, &acquire<false>, &release,
                                              &acquire_if_loaded};
  return caller_abi_minor >= 7 ? current : before_adapters;
}

}  // namespace lpx::core
