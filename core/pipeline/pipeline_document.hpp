// A parsed pipeline file plus its command-line overrides, remembering where every value came from.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "pipeline/diagnostics.hpp"

namespace lpx::core {

class PipelineDocument {
 public:
  // Parses `path` and applies `overrides` ("a.b.c=value"; the value is read as TOML, and as a
  // plain string when it is not valid TOML, so `--set model.path=x.gguf` works unquoted).
  // Returns false with diagnostics on a syntax error or a malformed override.
  bool load(const std::string& path, const std::vector<std::string>& overrides,
            Diagnostics& diagnostics);
  // The same for a document held in memory; `path` names it in messages.
  bool load_text(const std::string& path, const std::string& text,
                 const std::vector<std::string>& overrides, Diagnostics& diagnostics);

  const std::string& path() const noexcept { return path_; }
  const toml::table& root() const noexcept { return root_; }

  // Where `node` (found at dotted `key_path`) was written.
  SourceLocation where(const toml::node& node, const std::string& key_path) const;
  // Where the key itself was written (for "unknown key" errors).
  SourceLocation where_key(const toml::key& key, const std::string& key_path) const;
  // Where the table at dotted `key_path` starts (for "missing key" errors).
  SourceLocation where_table(const toml::table& table, const std::string& key_path) const;

 private:
  // The file at `path`, or `text` named `path` when given; then the overrides.
  bool parse(const std::string& path, const std::string* text,
             const std::vector<std::string>& overrides, Diagnostics& diagnostics);
  bool apply_override(const std::string& text, Diagnostics& diagnostics);

  std::string path_;
  toml::table root_;
  std::map<std::string, SourceLocation> override_origin_;  // dotted key path -> "--set ..."
};

}  // namespace lpx::core
