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

void list(lpx_models* models, void (*visit)(void*, const lpx_model_entry*), void* user) noexcept {
  if (models == nullptr || visit == nullptr) return;
  try {
    self(models).list([&](const lpx_model_entry& entry) { visit(user, &entry); });
  } catch (const std::exception& e) {
    spdlog::error("models.list: {}", e.what());
  }
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

void acquire(lpx_models* models, const char* name, lpx_model_acquired on_acquired, void* user) noexcept {
  if (on_acquired == nullptr) return;
  if (models == nullptr) {
    report(on_acquired, user, internal_error(std::string("models.acquire: NULL models")), 0);
    return;
  }
  try {
    self(models).acquire(name ? std::string_view(name) : std::string_view(),
                         [on_acquired, user](Expected<Lease> lease, double retry_after_s) {
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

const lpx_models_api& models_c_api() noexcept {
  static const lpx_models_api api{sizeof(lpx_models_api), &list, &acquire, &release, &acquire_if_loaded};
  return api;
}

}  // namespace lpx::core
