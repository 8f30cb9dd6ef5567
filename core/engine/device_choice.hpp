// Which backend plugin a --device flag (or a pipeline's device choice) means, checked at once.
// CUDA is never replaced by the CPU behind the user's back: asking for it where it cannot run
// is an error that says why (no plugin, no driver, driver too old, no GPU, no kernels for this
// GPU). `auto` picks cuda when a GPU is usable and cpu otherwise, and logs which and why.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "pipeline/option_schema.hpp"
#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct BackendChoice {
  std::string plugin;                              // "cpu", "cuda", or the --backend name
  std::map<std::string, OptionValue> options;  // {"gpu": N} for cuda:N
};

// `device` is cpu, cuda, cuda:N or auto; a non-empty `backend` (a plugin name) wins over it.
Expected<BackendChoice> backend_for_device(const std::string& device,
                                                 const std::string& backend,
                                                 PluginRegistry& registry);

// The CLI11 check of a --device value: empty when valid, else the message.
std::string check_device(const std::string& device);

}  // namespace lpx::core
