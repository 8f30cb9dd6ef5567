#include <iomanip>
#include <iostream>

#include <boost/json.hpp>

#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "plugin_host/plugin_registry.hpp"

namespace lpx::cli {
namespace {

struct Listing {
  std::vector<std::shared_ptr<core::PluginLibrary>> loaded;
  std::vector<std::pair<core::PluginCandidate, std::string>> refused;  // with the reason
};

Listing load_everything(core::PluginRegistry& registry) {
  Listing listing;
  for (const core::PluginCandidate& candidate : registry.candidates()) {
    auto plugin = registry.load(candidate.name);
    if (plugin) {
      listing.loaded.push_back(*plugin);
    } else {
      listing.refused.emplace_back(candidate, plugin.error().message);
    }
  }
  return listing;
}

std::string abi_of(const core::PluginDescription& d) {
  return std::to_string(d.abi_major) + "." + std::to_string(d.abi_minor);
}

std::string default_text(const core::OptionSpec& spec) {
  if (spec.required) return "required";
  if (spec.default_value) return "default " + core::to_toml_text(*spec.default_value);
  return "optional";
}

void print_text(const Listing& listing, const core::PluginRegistry& registry, bool show_options) {
  std::cout << std::left << std::setw(18) << "NAME" << std::setw(15) << "KIND" << std::setw(10)
            << "VERSION" << std::setw(6) << "ABI" << "PATH\n";
  for (const auto& plugin : listing.loaded) {
    const core::PluginDescription& d = plugin->description();
    std::cout << std::setw(18) << d.name << std::setw(15) << core::kind_name(d.kind)
              << std::setw(10) << d.version << std::setw(6) << abi_of(d) << d.path.string()
              << "\n";
    std::cout << "    " << d.description << " [" << d.license << "]\n";
    if (!d.capabilities.empty()) {
      std::cout << "    capabilities:";
      for (const std::string& c : d.capabilities) std::cout << ' ' << c;
      std::cout << "\n";
    }
    if (!show_options) continue;
    for (const core::OptionSpec& spec : d.options) {
      std::cout << "    option " << spec.name << " (" << core::type_name(spec.type) << ", "
                << default_text(spec) << "): " << spec.description << "\n";
    }
  }
  if (listing.loaded.empty()) {
    std::cout << "(no plugins found; searched:";
    for (const auto& dir : registry.search_path()) std::cout << ' ' << dir.string();
    std::cout << ")\n";
  }
  for (const auto& [candidate, reason] : listing.refused) {
    std::cerr << "warning: refused plugin '" << candidate.name << "': " << reason << "\n";
  }
  for (const core::PluginCandidate& hidden : registry.shadowed()) {
    std::cerr << "note: " << hidden.path.string() << " is shadowed by an earlier '" << hidden.name
              << "'\n";
  }
}

void print_json(const Listing& listing) {
  boost::json::array plugins;
  for (const auto& plugin : listing.loaded) {
    const core::PluginDescription& d = plugin->description();
    boost::json::array options;
    for (const core::OptionSpec& spec : d.options) {
      boost::json::object option{{"name", spec.name},
                                 {"type", core::type_name(spec.type)},
                                 {"required", spec.required},
                                 {"description", spec.description}};
      if (spec.default_value) option["default"] = core::to_toml_text(*spec.default_value);
      options.push_back(std::move(option));
    }
    boost::json::array capabilities;
    for (const std::string& c : d.capabilities) capabilities.push_back(boost::json::value(c));
    plugins.push_back(boost::json::object{{"name", d.name},
                                          {"kind", core::kind_name(d.kind)},
                                          {"version", d.version},
                                          {"abi", abi_of(d)},
                                          {"license", d.license},
                                          {"description", d.description},
                                          {"path", d.path.string()},
                                          {"capabilities", std::move(capabilities)},
                                          {"options", std::move(options)}});
  }
  boost::json::array refused;
  for (const auto& [candidate, reason] : listing.refused) {
    refused.push_back(boost::json::object{
        {"name", candidate.name}, {"path", candidate.path.string()}, {"error", reason}});
  }
  std::cout << boost::json::serialize(boost::json::object{{"plugins", std::move(plugins)},
                                                          {"refused", std::move(refused)}})
            << "\n";
}

}  // namespace

int plugins_command(const PluginsArguments& arguments) {
  core::MetricsRegistry metrics;
  core::HostServices services(metrics);
  core::PluginRegistry registry(core::default_plugin_search_path(), services);
  const Listing listing = load_everything(registry);
  if (arguments.json) {
    print_json(listing);
  } else {
    print_text(listing, registry, arguments.show_options);
  }
  return kExitOk;
}

Command add_plugins_command(CLI::App& parent) {
  auto plugins = std::make_shared<PluginsArguments>();
  CLI::App* plugins_app = parent.add_subcommand("plugins", "List the plugins this host can load");
  plugins_app->add_flag("--options", plugins->show_options, "Show each plugin's options");
  plugins_app->add_flag("--json", plugins->json, "Machine-readable output");
  return {plugins_app, [plugins] {
    return plugins_command(*plugins);
  }};
}

}  // namespace lpx::cli
