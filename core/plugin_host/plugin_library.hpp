// One loaded plugin library: ABI negotiation, the checked descriptor, init/shutdown, instances.
//
// Lifetime: a PluginLibrary is shared by every PluginInstance it creates, so the library is
// unloaded (after `shutdown`) only when the last instance is gone. Not thread-safe: load and
// create on one thread; instances follow the threading rules of their kind.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "lpx/lpx.h"
#include "pipeline/option_schema.hpp"
#include "pipeline/resolved_options.hpp"
#include "plugin_host/host_services.hpp"
#include "util/expected.hpp"

namespace lpx::core {

// What a plugin says about itself, copied out of its descriptor and checked.
struct PluginDescription {
  std::filesystem::path path;
  std::string name;
  lpx_plugin_kind kind = LPX_KIND_SAMPLER;
  std::string version;
  std::string license;
  std::string description;
  std::uint32_t abi_major = 0;
  std::uint32_t abi_minor = 0;
  std::vector<OptionSpec> options;
  std::vector<std::string> capabilities;
};

// "model_format", "quant_backend", "sampler", "transport".
const char* kind_name(lpx_plugin_kind kind);

class PluginInstance;

class PluginLibrary : public std::enable_shared_from_this<PluginLibrary> {
 public:
  // Loads `path`, negotiates the ABI, checks the descriptor and calls init. When `expected_name`
  // is given, the plugin must call itself that. Every failure is a message starting with the path.
  // A library already alive in this process is returned as is: init runs once per process.
  static Expected<std::shared_ptr<PluginLibrary>> load(const std::filesystem::path& path,
                                                       HostServices& services,
                                                       const std::string& expected_name = {});
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const PluginDescription& description() const noexcept { return description_; }
  // The static tags, refined by the plugin's `supports` query when it has one.
  bool supports(const std::string& capability) const;
  // The plugin's own checks across options (ABI 1.1+); the plugin's message on failure.
  Expected<bool> validate_options(const ResolvedOptions& options) const;
  // Creates an instance from validated options.
  Expected<std::shared_ptr<PluginInstance>> create(const ResolvedOptions& options);

  // The kind's function table, copied with entries the plugin did not provide zeroed.
  template <class Api>
  const Api& api() const {
    return std::get<Api>(kind_api_);
  }

 private:
  friend class PluginInstance;  // calls descriptor_.destroy
  PluginLibrary() = default;
  static Expected<std::shared_ptr<PluginLibrary>> load_new(const std::filesystem::path& path,
                                                           HostServices& services,
                                                           const std::string& expected_name);
  Expected<bool> adopt_descriptor(const lpx_plugin_descriptor& plugin_descriptor);
  Expected<bool> adopt_kind_api();
  Expected<bool> initialize(HostServices& services);

  // Declared first so it is destroyed last: no code of the plugin runs after the unload.
  boost::dll::shared_library library_;
  lpx_plugin_descriptor descriptor_{};
  std::variant<std::monostate, lpx_model_format_api, lpx_quant_backend_api, lpx_sampler_api,
               lpx_transport_api>
      kind_api_;
  PluginDescription description_;
  std::unique_ptr<PluginHostApi> host_api_;
  lpx_plugin_state* state_ = nullptr;
  bool initialized_ = false;
};

// One object made by a plugin's `create`. Keeps its library loaded; destroys itself on release.
class PluginInstance {
 public:
  PluginInstance(std::shared_ptr<PluginLibrary> library, lpx_instance* raw) noexcept
      : library_(std::move(library)), raw_(raw) {}
  ~PluginInstance();
  PluginInstance(const PluginInstance&) = delete;
  PluginInstance& operator=(const PluginInstance&) = delete;

  lpx_instance* raw() const noexcept { return raw_; }
  const PluginLibrary& library() const noexcept { return *library_; }
  template <class Api>
  const Api& api() const {
    return library_->api<Api>();
  }

 private:
  std::shared_ptr<PluginLibrary> library_;
  lpx_instance* raw_;
};

// Takes ownership of `status` and returns its message ("" for NULL).
std::string take_status_message(lpx_status* status);

// Takes ownership of `status` (not NULL) and returns it as a Status: code, message and field.
// A plugin that reports LPX_OK as a failure broke the contract: that reads as INTERNAL.
Status take_status(lpx_status* status);

}  // namespace lpx::core
