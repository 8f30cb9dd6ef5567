#include "plugin_host/plugin_library.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>

#include <spdlog/spdlog.h>

#include "lpx/cpp/status.hpp"
#include "plugin_host/abi_layout.hpp"

namespace lpx::core {
namespace {

std::string version_text(std::uint32_t major, std::uint32_t minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool is_valid_plugin_name(const std::string& name) {
  if (name.empty()) return false;
  auto ok = [](char c, bool first) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (!first && (c == '_' || c == '-'));
  };
  for (size_t i = 0; i < name.size(); ++i) {
    if (!ok(name[i], i == 0)) return false;
  }
  return true;
}

std::string text_or_empty(const char* text) { return text ? text : ""; }

// Message of the exception being handled, for a plugin that let one cross the C ABI.
std::string current_exception_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

// Copies a kind table whose first member is its struct_size: at most the bytes the plugin's
// minor defines, and no more than the plugin says it has; entries it lacks stay NULL.
template <class Api>
Expected<Api> copy_kind_api(const void* table, lpx_plugin_kind kind, std::uint32_t minor) {
  const std::size_t defined = abi::kind_table_size(*abi::layout_for_minor(minor), kind);
  std::uint32_t plugin_size = 0;
  std::memcpy(&plugin_size, table, sizeof(plugin_size));
  if (plugin_size < defined) {
    return invalid_argument("its " + std::string(kind_name(kind)) + " table is " +
                      std::to_string(plugin_size) + " bytes, ABI " +
                      version_text(LPX_ABI_MAJOR, minor) + " needs at least " +
                      std::to_string(defined));
  }
  Api api{};
  abi::copy_defined(table, plugin_size, defined, &api, sizeof(Api));
  return api;
}

// A plugin in lpx-NAME.so must call itself NAME (when the caller knows NAME).
Expected<bool> check_name(const std::string& expected, const std::string& actual) {
  if (expected.empty() || expected == actual) return true;
  return invalid_argument("file name promises plugin '" + expected + "' but the plugin calls itself '" +
                    actual + "'");
}

Expected<bool> missing(const char* entry) {
  return invalid_argument(std::string("its function table lacks the required entry '") + entry + "'");
}

}  // namespace

const char* kind_name(lpx_plugin_kind kind) {
  switch (kind) {
    case LPX_KIND_MODEL_FORMAT: return "model_format";
    case LPX_KIND_QUANT_BACKEND: return "quant_backend";
    case LPX_KIND_SAMPLER: return "sampler";
    case LPX_KIND_TRANSPORT: return "transport";
  }
  return "unknown";
}

std::string take_status_message(lpx_status* status) { return take_status(status).message; }

Status take_status(lpx_status* status) {
  if (status == nullptr) return {};
  const auto code = static_cast<lpx_status_code>(status->code);
  Status taken(code == LPX_OK ? LPX_ERR_INTERNAL : code,
               status->message ? status->message : "(no message)");
  if (const char* field = lpx_status_field(status)) taken.field = field;
  status->release(status);
  return taken;
}

// Libraries alive in this process, by canonical path: a library is initialised once per process
// however many registries ask for it (its static state, e.g. the C++ wrapper's host pointer, is
// per process too).
struct LiveLibraries {
  std::mutex mutex;
  std::map<std::filesystem::path, std::weak_ptr<PluginLibrary>> by_path;
};
LiveLibraries& live_libraries() {
  static LiveLibraries live;
  return live;
}

Expected<std::shared_ptr<PluginLibrary>> PluginLibrary::load(const std::filesystem::path& path,
                                                             HostServices& services,
                                                             const std::string& expected_name) {
  std::error_code ignored;
  const std::filesystem::path key = std::filesystem::weakly_canonical(path, ignored);
  LiveLibraries& live = live_libraries();
  std::lock_guard lock(live.mutex);
  if (auto existing = live.by_path[key].lock()) {
    if (auto named = check_name(expected_name, existing->description_.name); !named) {
      return unexpected(named.error().with_context(path.string()));
    }
    return existing;
  }
  auto loaded = load_new(path, services, expected_name);
  if (loaded) live.by_path[key] = *loaded;
  return loaded;
}

Expected<std::shared_ptr<PluginLibrary>> PluginLibrary::load_new(const std::filesystem::path& path,
                                                                 HostServices& services,
                                                                 const std::string& expected_name) {
  const std::string where = path.string() + ": ";
  std::shared_ptr<PluginLibrary> plugin(new PluginLibrary());
  boost::dll::fs::error_code error;
  plugin->library_.load(path, error,
                        boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local);
  if (error) {
    std::error_code absent;
    const lpx_status_code code = std::filesystem::exists(path, absent) ? LPX_ERR_INVALID_ARGUMENT
                                                                        : LPX_ERR_NOT_FOUND;
    return fail(code, where + "cannot load: " + error.message());
  }
  if (!plugin->library_.has(LPX_PLUGIN_ENTRY_SYMBOL)) {
    return invalid_argument(where + "not an LPX plugin: it does not export '" LPX_PLUGIN_ENTRY_SYMBOL
                              "'");
  }
  auto entry = plugin->library_.get<const lpx_plugin_descriptor*()>(LPX_PLUGIN_ENTRY_SYMBOL);
  const lpx_plugin_descriptor* descriptor = nullptr;
  try {
    descriptor = entry();
  } catch (...) {
    return internal_error(where + LPX_PLUGIN_ENTRY_SYMBOL " threw a C++ exception across the C ABI (" +
                      current_exception_text() + ")");
  }
  if (descriptor == nullptr) return invalid_argument(where + LPX_PLUGIN_ENTRY_SYMBOL " returned NULL");

  const std::string plugin_version = version_text(descriptor->abi_major, descriptor->abi_minor);
  const std::string host_version = version_text(LPX_ABI_MAJOR, LPX_ABI_MINOR);
  if (descriptor->abi_major != LPX_ABI_MAJOR) {
    return unsupported(where + "plugin ABI " + plugin_version + " is incompatible with host ABI " +
                      host_version + " (major versions differ); rebuild the plugin against LPX SDK " +
                      std::to_string(LPX_ABI_MAJOR) + ".x");
  }
  if (descriptor->abi_minor > LPX_ABI_MINOR) {
    return unsupported(where + "plugin needs ABI " + plugin_version + " but this host provides " +
                      host_version + "; upgrade LPX or rebuild the plugin against SDK " +
                      host_version);
  }
  if (auto ok = plugin->adopt_descriptor(*descriptor); !ok) return unexpected(ok.error().prefixed(where));
  if (auto named = check_name(expected_name, plugin->description_.name); !named) {
    return unexpected(named.error().prefixed(where));
  }
  plugin->description_.path = path;
  if (auto ok = plugin->adopt_kind_api(); !ok) return unexpected(ok.error().prefixed(where));
  if (auto ok = plugin->initialize(services); !ok) return unexpected(ok.error().prefixed(where));
  return plugin;
}

Expected<bool> PluginLibrary::adopt_descriptor(const lpx_plugin_descriptor& d) {
  // Read only what the plugin's minor defines, and only as many bytes as it says it has.
  const size_t needed = abi::layout_for_minor(d.abi_minor)->descriptor;
  if (d.struct_size < needed) {
    return invalid_argument("descriptor is " + std::to_string(d.struct_size) + " bytes, ABI " +
                      version_text(d.abi_major, d.abi_minor) + " needs at least " +
                      std::to_string(needed));
  }
  abi::copy_defined(&d, d.struct_size, needed, &descriptor_, sizeof(descriptor_));

  PluginDescription& out = description_;
  out.name = text_or_empty(descriptor_.name);
  if (!is_valid_plugin_name(out.name)) {
    return invalid_argument("plugin name '" + out.name + "' is not [a-z0-9][a-z0-9_-]*");
  }
  if (descriptor_.kind < LPX_KIND_MODEL_FORMAT || descriptor_.kind > LPX_KIND_TRANSPORT) {
    return invalid_argument("unknown plugin kind " + std::to_string(descriptor_.kind));
  }
  out.kind = static_cast<lpx_plugin_kind>(descriptor_.kind);
  out.version = text_or_empty(descriptor_.version);
  out.license = text_or_empty(descriptor_.license);
  out.description = text_or_empty(descriptor_.description);
  out.abi_major = descriptor_.abi_major;
  out.abi_minor = descriptor_.abi_minor;
  if (descriptor_.create == nullptr || descriptor_.destroy == nullptr ||
      descriptor_.kind_api == nullptr) {
    return invalid_argument(std::string("descriptor lacks create, destroy or kind_api"));
  }

  if (descriptor_.option_count > 0) {
    if (descriptor_.options == nullptr || descriptor_.option_spec_size < sizeof(lpx_option_spec)) {
      return invalid_argument(std::string("options are declared but their table is missing or short"));
    }
  }
  const auto* bytes = reinterpret_cast<const unsigned char*>(descriptor_.options);
  for (std::uint32_t i = 0; i < descriptor_.option_count; ++i) {
    lpx_option_spec spec{};
    std::memcpy(&spec, bytes + size_t{i} * descriptor_.option_spec_size, sizeof(spec));
    auto converted = option_spec_from_c(spec);
    if (!converted) return unexpected(converted.error());
    if (converted->name == "plugin") {
      return invalid_argument(std::string("option name 'plugin' is reserved for the pipeline"));
    }
    for (const OptionSpec& earlier : out.options) {
      if (earlier.name == converted->name) {
        return invalid_argument("option '" + earlier.name + "' is declared twice");
      }
    }
    out.options.push_back(std::move(*converted));
  }
  if (descriptor_.capability_count > 0 && descriptor_.capabilities == nullptr) {
    return invalid_argument(std::string("capabilities are counted but missing"));
  }
  for (std::uint32_t i = 0; i < descriptor_.capability_count; ++i) {
    if (descriptor_.capabilities[i] == nullptr) {
      return invalid_argument("capability " + std::to_string(i) + " is NULL");
    }
    out.capabilities.emplace_back(descriptor_.capabilities[i]);
  }
  return true;
}

Expected<bool> PluginLibrary::adopt_kind_api() {
  const void* table = descriptor_.kind_api;
  switch (description_.kind) {
    case LPX_KIND_MODEL_FORMAT: {
      auto api =
          copy_kind_api<lpx_model_format_api>(table, LPX_KIND_MODEL_FORMAT, description_.abi_minor);
      if (!api) return unexpected(api.error());
      if (!api->probe || !api->open || !api->close || !api->metadata_find ||
          !api->metadata_array_at || !api->tensor_count || !api->tensor_at) {
        return missing("probe/open/close/metadata_find/metadata_array_at/tensor_count/tensor_at");
      }
      kind_api_ = *api;
      break;
    }
    case LPX_KIND_QUANT_BACKEND: {
      auto api =
          copy_kind_api<lpx_quant_backend_api>(table, LPX_KIND_QUANT_BACKEND, description_.abi_minor);
      if (!api) return unexpected(api.error());
      if (!api->supports_type || !api->matmul || !api->dequantize_row) {
        return missing("supports_type/matmul/dequantize_row");
      }
      kind_api_ = *api;
      break;
    }
    case LPX_KIND_SAMPLER: {
      auto api =
          copy_kind_api<lpx_sampler_api>(table, LPX_KIND_SAMPLER, description_.abi_minor);
      if (!api) return unexpected(api.error());
      if (!api->apply) return missing("apply");
      if (api->state_create && !api->state_destroy) return missing("state_destroy");
      kind_api_ = *api;
      break;
    }
    case LPX_KIND_TRANSPORT: {
      auto api =
          copy_kind_api<lpx_transport_api>(table, LPX_KIND_TRANSPORT, description_.abi_minor);
      if (!api) return unexpected(api.error());
      if (!api->run) return missing("run");
      if (!api->request_stop) return missing("request_stop");
      kind_api_ = *api;
      break;
    }
  }
  return true;
}

Expected<bool> PluginLibrary::initialize(HostServices& services) {
  host_api_ = services.make_api(description_.name);
  if (descriptor_.init == nullptr) {
    initialized_ = true;
    return true;
  }
  lpx_status* status = nullptr;
  lpx_plugin_state* state = nullptr;
  try {
    status = descriptor_.init(&host_api_->table, &state);
  } catch (...) {
    return internal_error("init threw a C++ exception across the C ABI (" + current_exception_text() +
                      "); the plugin is refused");
  }
  if (status != nullptr) return unexpected(take_status(status).prefixed("init failed: "));
  state_ = state;
  initialized_ = true;
  return true;
}

PluginLibrary::~PluginLibrary() {
  if (!initialized_ || descriptor_.shutdown == nullptr) return;
  try {
    descriptor_.shutdown(state_);
  } catch (...) {
    spdlog::error("plugin '{}': shutdown threw a C++ exception across the C ABI", description_.name);
  }
}

Expected<bool> PluginLibrary::validate_options(const ResolvedOptions& options) const {
  if (descriptor_.validate_options == nullptr) return true;
  lpx_status* status = nullptr;
  try {
    status = descriptor_.validate_options(state_, &options);
  } catch (...) {
    return internal_error("validate_options threw a C++ exception across the C ABI (" +
                      current_exception_text() + ")");
  }
  if (status != nullptr) return unexpected(take_status(status));
  return true;
}

bool PluginLibrary::supports(const std::string& capability) const {
  if (descriptor_.supports != nullptr) {
    try {
      return descriptor_.supports(state_, capability.c_str()) != 0;
    } catch (...) {
      spdlog::error("plugin '{}': supports threw a C++ exception across the C ABI",
                    description_.name);
      return false;
    }
  }
  return std::find(description_.capabilities.begin(), description_.capabilities.end(),
                   capability) != description_.capabilities.end();
}

Expected<std::shared_ptr<PluginInstance>> PluginLibrary::create(const ResolvedOptions& options) {
  const std::string where = "plugin '" + description_.name + "': ";
  lpx_instance* raw = nullptr;
  lpx_status* status = nullptr;
  try {
    status = descriptor_.create(state_, &options, &raw);
  } catch (...) {
    return internal_error(where + "create threw a C++ exception across the C ABI (" +
                      current_exception_text() + ")");
  }
  if (status != nullptr) return unexpected(take_status(status).prefixed(where));
  if (raw == nullptr) return invalid_argument(where + "create succeeded but returned no instance");
  return std::make_shared<PluginInstance>(shared_from_this(), raw);
}

PluginInstance::~PluginInstance() {
  try {
    library_->descriptor_.destroy(raw_);
  } catch (...) {
    spdlog::error("plugin '{}': destroy threw a C++ exception across the C ABI",
                  library_->description().name);
  }
}

}  // namespace lpx::core
