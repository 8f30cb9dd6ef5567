// Which backend plugin a --device flag means. CUDA is never replaced by the CPU behind the
// user's back: asking for it where no CUDA backend exists is an error that says so.
#pragma once

#include <string>

#include "plugin_host/plugin_registry.hpp"
#include "util/expected.hpp"

namespace lpx::cli {

// `device` is cpu, cuda, cuda:N or auto; a non-empty `backend` (a plugin name) wins over it.
core::Expected<std::string> backend_for_device(const std::string& device, const std::string& backend,
                                               core::PluginRegistry& registry);

// The CLI11 check of a --device value: empty when valid, else the message.
std::string check_device(const std::string& device);

}  // namespace lpx::cli
