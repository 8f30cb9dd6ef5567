#include "plugin_host/plugin_registry.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include <boost/dll/runtime_symbol_info.hpp>
#include <spdlog/spdlog.h>

#include "util/did_you_mean.hpp"

namespace lpx::core {
namespace {

constexpr std::string_view kPrefix = "lpx-";
constexpr std::string_view kSuffix = ".so";

// "lpx-NAME.so" -> "NAME", or "" for any other file name.
std::string plugin_name_of(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  if (name.size() <= kPrefix.size() + kSuffix.size()) return {};
  if (name.compare(0, kPrefix.size(), kPrefix) != 0) return {};
  if (name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) return {};
  return name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
}

}  // namespace

std::vector<std::filesystem::path> default_plugin_search_path() {
  std::vector<std::filesystem::path> path;
  if (const char* env = std::getenv("LPX_PLUGIN_PATH")) {
    std::istringstream entries(env);
    std::string entry;
    while (std::getline(entries, entry, ':')) {
      if (!entry.empty()) path.emplace_back(entry);
    }
  }
  boost::dll::fs::error_code error;
  const auto program = boost::dll::program_location(error);
  if (!error) path.push_back(program.parent_path().parent_path() / "lib" / "lpx" / "plugins");
  path.emplace_back(LPX_INSTALL_PLUGIN_DIR);
  return path;
}

PluginRegistry::PluginRegistry(std::vector<std::filesystem::path> search_path,
                               HostServices& services)
    : search_path_(std::move(search_path)), services_(services) {
  for (const auto& directory : search_path_) {
    std::error_code error;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
      if (!plugin_name_of(entry.path()).empty()) files.push_back(entry.path());
    }
    if (error) {
      spdlog::debug("plugin search: skipping {}: {}", directory.string(), error.message());
      continue;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      PluginCandidate candidate{plugin_name_of(file), file};
      auto same = std::find_if(candidates_.begin(), candidates_.end(),
                               [&](const PluginCandidate& c) { return c.name == candidate.name; });
      if (same == candidates_.end()) {
        candidates_.push_back(std::move(candidate));
      } else if (std::filesystem::equivalent(same->path, file, error)) {
        continue;  // the same folder reached twice (a symlink, a repeated entry)
      } else {
        spdlog::debug("plugin '{}' at {} is shadowed by {}", candidate.name, file.string(),
                      same->path.string());
        shadowed_.push_back(std::move(candidate));
      }
    }
  }
  std::sort(candidates_.begin(), candidates_.end(),
            [](const PluginCandidate& a, const PluginCandidate& b) { return a.name < b.name; });
}

std::vector<std::string> PluginRegistry::names() const {
  std::vector<std::string> names;
  for (const PluginCandidate& c : candidates_) names.push_back(c.name);
  return names;
}

Expected<std::shared_ptr<PluginLibrary>> PluginRegistry::load(const std::string& name) {
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(name); it != loaded_.end()) return it->second;
  auto candidate = std::find_if(candidates_.begin(), candidates_.end(),
                                [&](const PluginCandidate& c) { return c.name == name; });
  if (candidate == candidates_.end()) {
    return not_found("unknown plugin '" + name + "'" + did_you_mean(name, names()) +
                      "; known plugins: " + join_or_none(names()));
  }
  auto result = PluginLibrary::load(candidate->path, services_, name);
  if (result) {
    spdlog::debug("loaded plugin '{}' {} from {}", name, result.value()->description().version,
                  candidate->path.string());
  }
  loaded_.emplace(name, result);
  return result;
}

}  // namespace lpx::core
