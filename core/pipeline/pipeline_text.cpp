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
    const bool secret = is_secret(name) && std::holds_alternative<std::string>(value);
    out += secret ? quoted("<redacted>") : to_toml_text(value);
    out += '\n';
  }
}

}  // namespace

std::string section_toml(const PipelineSection& section) {
  const bool chain = section.slot == "sampler" || section.slot == "models";
  std::string out = chain ? "[[" : "[";
  out += section.slot;
  out += chain ? "]]\n" : "]\n";
  out += "plugin = ";
  out += quoted(section.plugin->description().name);
  out += '\n';
  write_values(out, section.core_options);
  write_values(out, section.options);
  return out;
}

std::string core_tables_toml(const Pipeline& pipeline) {
  std::string out;
  if (!pipeline.engine.values.empty()) {
    out += "[engine]\n";
    write_values(out, pipeline.engine);
  }
  if (!pipeline.speculative.values.empty()) {
    out += out.empty() ? "[speculative]\n" : "\n[speculative]\n";
    write_values(out, pipeline.speculative);
  }
  return out;
}

std::string resolved_pipeline_toml(const Pipeline& pipeline) {
  std::string out = "[pipeline]\nname = ";
  out += quoted(pipeline.name);
  if (!pipeline.description.empty()) {
    out += "\ndescription = ";
    out += quoted(pipeline.description);
  }
  out += '\n';
  if (const std::string tables = core_tables_toml(pipeline); !tables.empty()) {
    out += '\n';
    out += tables;
  }
  for (const PipelineSection& section : pipeline.sections) {
    out += '\n';
    out += section_toml(section);
  }
  return out;
}

}  // namespace lpx::core
