#include "pipeline/pipeline_document.hpp"

#include <sstream>

namespace lpx::core {
namespace {

SourceLocation location_of(const toml::source_region& source, const std::string& fallback_file) {
  return {source.path ? std::string(*source.path) : fallback_file, source.begin.line,
          source.begin.column};
}

std::vector<std::string> split_key_path(const std::string& dotted) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(dotted);
  while (std::getline(in, part, '.')) parts.push_back(part);
  return parts;
}

}  // namespace

bool PipelineDocument::load(const std::string& path, const std::vector<std::string>& overrides,
                            Diagnostics& diagnostics) {
  return parse(path, nullptr, overrides, diagnostics);
}

bool PipelineDocument::load_text(const std::string& path, const std::string& text,
                                 const std::vector<std::string>& overrides,
                                 Diagnostics& diagnostics) {
  return parse(path, &text, overrides, diagnostics);
}

bool PipelineDocument::parse(const std::string& path, const std::string* text,
                             const std::vector<std::string>& overrides, Diagnostics& diagnostics) {
  path_ = path;
  try {
    root_ = text != nullptr ? toml::parse(*text, path) : toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    diagnostics.error(location_of(e.source(), path), std::string(e.description()));
    return false;
  }
  bool ok = true;
  for (const std::string& o : overrides) ok = apply_override(o, diagnostics) && ok;
  return ok;
}

bool PipelineDocument::apply_override(const std::string& text, Diagnostics& diagnostics) {
  const SourceLocation origin{"--set " + text, 0, 0};
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    diagnostics.error(origin, "expected KEY=VALUE, e.g. sampler.temperature=0.7");
    return false;
  }
  const std::string key_path = text.substr(0, eq);
  const std::string value_text = text.substr(eq + 1);
  std::vector<std::string> keys = split_key_path(key_path);
  for (const std::string& key : keys) {
    if (key.empty()) {
      diagnostics.error(origin, "key '" + key_path + "' has an empty part");
      return false;
    }
  }

  toml::table parsed;
  try {
    parsed = toml::parse("value = " + value_text);
  } catch (const toml::parse_error&) {
    parsed.insert_or_assign("value", value_text);  // not TOML: take it as a plain string
  }

  toml::table* table = &root_;
  for (size_t i = 0; i + 1 < keys.size(); ++i) {
    toml::node* child = table->get(keys[i]);
    if (child == nullptr) {
      child = &table->insert_or_assign(keys[i], toml::table{}).first->second;
    }
    if (!child->is_table()) {
      diagnostics.error(origin, "'" + keys[i] + "' is not a table, cannot set '" + key_path + "'");
      return false;
    }
    table = child->as_table();
  }
  table->insert_or_assign(keys.back(), std::move(*parsed.get("value")));
  override_origin_[key_path] = origin;
  return true;
}

SourceLocation PipelineDocument::where(const toml::node& node, const std::string& key_path) const {
  if (auto it = override_origin_.find(key_path); it != override_origin_.end()) return it->second;
  return location_of(node.source(), path_);
}

SourceLocation PipelineDocument::where_key(const toml::key& key,
                                           const std::string& key_path) const {
  if (auto it = override_origin_.find(key_path); it != override_origin_.end()) return it->second;
  return location_of(key.source(), path_);
}

SourceLocation PipelineDocument::where_table(const toml::table& table,
                                             const std::string& key_path) const {
  if (table.source().begin.line == 0) {
    // A table created by an override only; point at the first override under it.
    for (const auto& [path, origin] : override_origin_) {
      if (path.rfind(key_path + ".", 0) == 0) return origin;
    }
    return {path_, 1, 1};
  }
  return location_of(table.source(), path_);
}

}  // namespace lpx::core
