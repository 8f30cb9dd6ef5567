// Finds plugin libraries on the search path and loads them by name, once.
//
// A plugin named NAME lives in a file called `lpx-NAME.so`. Directories are searched in order;
// the first file for a name wins and later ones are reported as shadowed. Loading is lazy: only
// the plugins a pipeline names are loaded (`load_all` is for listings). A library that fails to
// load is reported with its reason and never stops the others. load() is thread-safe: engines
// load sampler plugins for requests, and models load while others serve.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin_host/host_services.hpp"
#include "plugin_host/plugin_library.hpp"
#include "util/expected.hpp"

namespace lpx::core {

struct PluginCandidate {
  std::string name;
  std::filesystem::path path;
};

// The directories searched, in order: each entry of LPX_PLUGIN_PATH (':'-separated), then
// `<directory of the running binary>/../lib/lpx/plugins`, then the install prefix's plugin folder.
std::vector<std::filesystem::path> default_plugin_search_path();

class PluginRegistry {
 public:
  PluginRegistry(std::vector<std::filesystem::path> search_path, HostServices& services);

  const std::vector<std::filesystem::path>& search_path() const noexcept { return search_path_; }
  // One candidate per name, sorted by name.
  const std::vector<PluginCandidate>& candidates() const noexcept { return candidates_; }
  // Files hidden by an earlier file of the same name.
  const std::vector<PluginCandidate>& shadowed() const noexcept { return shadowed_; }
  std::vector<std::string> names() const;

  // The loaded plugin `name`; the same object on every call. Errors are remembered too.
  Expected<std::shared_ptr<PluginLibrary>> load(const std::string& name);

 private:
  std::vector<std::filesystem::path> search_path_;
  HostServices& services_;
  std::vector<PluginCandidate> candidates_;
  std::vector<PluginCandidate> shadowed_;
  std::mutex mutex_;  // loaded_
  std::map<std::string, Expected<std::shared_ptr<PluginLibrary>>> loaded_;
};

}  // namespace lpx::core
