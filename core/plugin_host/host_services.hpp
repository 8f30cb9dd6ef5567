// The host side of lpx_host_api: one table per loaded plugin, all backed by the same services
// (the process logger, the metrics registry, and accounted memory).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "lpx/host_api.h"
#include "metrics/metrics_registry.hpp"

namespace lpx::core {
class HostServices;
}

// Completes the SDK's opaque type: what identifies the calling plugin.
struct lpx_host_context {
  std::string plugin_name;
  lpx::core::HostServices* services = nullptr;
};

namespace lpx::core {

// A plugin's host table together with the context it points to (so the pointers stay valid).
struct PluginHostApi {
  lpx_host_context context;
  lpx_host_api table{};
};

class HostServices {
 public:
  explicit HostServices(MetricsRegistry& metrics) : metrics_(metrics) {}
  HostServices(const HostServices&) = delete;
  HostServices& operator=(const HostServices&) = delete;

  // A table for plugin `plugin_name`. It must outlive the plugin's shutdown.
  std::unique_ptr<PluginHostApi> make_api(const std::string& plugin_name);

  MetricsRegistry& metrics() noexcept { return metrics_; }
  // Bytes currently held by plugins through lpx_host_api.alloc.
  std::size_t plugin_bytes() const noexcept { return plugin_bytes_.load(); }

  void* allocate(std::size_t size, std::size_t alignment) noexcept;
  void deallocate(void* pointer) noexcept;

 private:
  MetricsRegistry& metrics_;
  std::atomic<std::size_t> plugin_bytes_{0};
};

}  // namespace lpx::core
