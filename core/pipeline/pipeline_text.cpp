#include "pipeline/pipeline_text.hpp"

#include <sstream>

#include <toml++/toml.h>

namespace lpx::core {
namespace {

bool is_secret(const std::string& name) {
  for (const char* word : {"key", "secret", "password"}) {
    if (name.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string quoted(const std::string& s) {
  std::ostringstream out;
  out << toml::value<std::string>(s);
  return out.str();
}

void write_values(std::string& out, const ResolvedOptions& options) {
  for (const auto& [name, value] : options.values) {
    out += name;
    out += " = ";
    out += is_secret(name) ? quoted("<redacted>") : to_toml_text(value);
    out += '\n';
  }
}

}  // namespace

std::string resolved_pipeline_toml(const Pipeline& pipeline) {
  std::string out = "[pipeline]\nname = ";
  out += quoted(pipeline.name);
  if (!pipeline.description.empty()) {
    out += "\ndescription = ";
    out += quoted(pipeline.description);
  }
  out += '\n';
  for (const PipelineSection& section : pipeline.sections) {
    const bool chain = section.slot == "sampler";
    out += chain ? "\n[[" : "\n[";
    out += section.slot;
    out += chain ? "]]\n" : "]\n";
    out += "plugin = ";
    out += quoted(section.plugin->description().name);
    out += '\n';
    write_values(out, section.core_options);
    write_values(out, section.options);
  }
  return out;
}

}  // namespace lpx::core
