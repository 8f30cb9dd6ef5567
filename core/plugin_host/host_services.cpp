#include "plugin_host/host_services.hpp"

#include <malloc.h>

#include <cstdlib>
#include <vector>

#include <spdlog/spdlog.h>

#include "lpx/cpp/status.hpp"
#include "lpx/version.h"
#include "pipeline/resolved_options.hpp"

namespace lpx::core {
namespace {

spdlog::level::level_enum to_spdlog(int32_t level) {
  switch (level) {
    case LPX_LOG_TRACE: return spdlog::level::trace;
    case LPX_LOG_DEBUG: return spdlog::level::debug;
    case LPX_LOG_INFO: return spdlog::level::info;
    case LPX_LOG_WARN: return spdlog::level::warn;
    case LPX_LOG_ERROR: return spdlog::level::err;
  }
  return spdlog::level::err;
}

void host_log(lpx_host_context* context, int32_t level, const char* message) noexcept {
  try {
    spdlog::log(to_spdlog(level), "{}: {}", context->plugin_name, message ? message : "");
  } catch (...) {
    // Logging must never take a plugin down.
  }
}

int32_t host_log_enabled(lpx_host_context*, int32_t level) noexcept {
  return spdlog::should_log(to_spdlog(level)) ? 1 : 0;
}

void* host_alloc(lpx_host_context* context, size_t size, size_t alignment) noexcept {
  return context->services->allocate(size, alignment);
}

void host_free(lpx_host_context* context, void* pointer) noexcept {
  context->services->deallocate(pointer);
}

lpx_status* host_metric_register(lpx_host_context* context, int32_t kind, const char* name,
                                 const char* help, const double* bounds, uint32_t bound_count,
                                 lpx_metric_id* out_id) noexcept {
  if (name == nullptr || out_id == nullptr || (bound_count > 0 && bounds == nullptr)) {
    return make_status(LPX_ERR_INVALID_ARGUMENT, "metric_register: NULL argument");
  }
  try {
    auto id = context->services->metrics().register_metric(
        kind, name, help ? help : "", std::vector<double>(bounds, bounds + bound_count));
    if (!id) return make_status(id.error().code, id.error().message.c_str());
    *out_id = *id;
    return nullptr;
  } catch (...) {
    return status_from_current_exception();
  }
}

void host_metric_record(lpx_host_context* context, lpx_metric_id id, double value) noexcept {
  context->services->metrics().record(id, value);
}

lpx_status* host_status_create(int32_t code, const char* message) noexcept {
  if (code <= LPX_OK || code > LPX_ERR_RESOURCE_EXHAUSTED) code = LPX_ERR_INTERNAL;
  return make_status(static_cast<lpx_status_code>(code), message);
}

}  // namespace

std::unique_ptr<PluginHostApi> HostServices::make_api(const std::string& plugin_name) {
  auto api = std::make_unique<PluginHostApi>();
  api->context.plugin_name = plugin_name;
  api->context.services = this;
  lpx_host_api& t = api->table;
  t.struct_size = sizeof(lpx_host_api);
  t.abi_major = LPX_ABI_MAJOR;
  t.abi_minor = LPX_ABI_MINOR;
  t.context = &api->context;
  t.log = &host_log;
  t.log_enabled = &host_log_enabled;
  t.alloc = &host_alloc;
  t.free = &host_free;
  t.metric_register = &host_metric_register;
  t.metric_record = &host_metric_record;
  t.option_is_set = &option_access::is_set;
  t.option_string = &option_access::get_string;
  t.option_int = &option_access::get_int;
  t.option_float = &option_access::get_float;
  t.option_bool = &option_access::get_bool;
  t.option_list_size = &option_access::list_size;
  t.option_list_string = &option_access::list_string;
  t.option_list_int = &option_access::list_int;
  t.status_create = &host_status_create;
  return api;
}

void* HostServices::allocate(std::size_t size, std::size_t alignment) noexcept {
  if (alignment == 0) alignment = alignof(std::max_align_t);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  void* pointer = nullptr;
  if (posix_memalign(&pointer, alignment, size == 0 ? 1 : size) != 0) return nullptr;
  plugin_bytes_.fetch_add(malloc_usable_size(pointer), std::memory_order_relaxed);
  return pointer;
}

void HostServices::deallocate(void* pointer) noexcept {
  if (pointer == nullptr) return;
  plugin_bytes_.fetch_sub(malloc_usable_size(pointer), std::memory_order_relaxed);
  std::free(pointer);
}

}  // namespace lpx::core
