// The options of one plugin section after validation: every declared option with its value
// (written, overridden or defaulted). This completes the SDK's opaque `lpx_options`.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pipeline/diagnostics.hpp"
#include "pipeline/option_schema.hpp"
#include "pipeline/pipeline_document.hpp"

struct lpx_options {
  std::vector<lpx::core::OptionSpec> specs;
  std::map<std::string, lpx::core::OptionValue, std::less<>> values;
};

namespace lpx::core {

using ResolvedOptions = ::lpx_options;

// Options with every declared default and nothing else: what a plugin gets when nobody set
// anything (the engine's default links, per-request sampler links, tools, tests).
ResolvedOptions default_options(const std::vector<OptionSpec>& specs);

// Checks `table` (at dotted `section`) against `specs`: unknown keys (with a suggestion), wrong
// types, out-of-range values, missing required options. Keys in `reserved` (like "plugin") are
// the caller's and skipped. Every problem is added to `diagnostics`; the result holds the valid
// values and the defaults.
ResolvedOptions resolve_options(const PipelineDocument& document, const toml::table& table,
                                const std::string& section, const std::vector<OptionSpec>& specs,
                                const std::vector<std::string>& reserved, Diagnostics& diagnostics);

// The C accessors the host table exposes to plugins (see lpx/host_api.h for their contracts).
namespace option_access {
int32_t is_set(const lpx_options* options, const char* name) noexcept;
lpx_status* get_string(const lpx_options* options, const char* name, const char** out,
                       size_t* out_length) noexcept;
lpx_status* get_int(const lpx_options* options, const char* name, int64_t* out) noexcept;
lpx_status* get_float(const lpx_options* options, const char* name, double* out) noexcept;
lpx_status* get_bool(const lpx_options* options, const char* name, int32_t* out) noexcept;
lpx_status* list_size(const lpx_options* options, const char* name, size_t* out) noexcept;
lpx_status* list_string(const lpx_options* options, const char* name, size_t index,
                        const char** out, size_t* out_length) noexcept;
lpx_status* list_int(const lpx_options* options, const char* name, size_t index,
                     int64_t* out) noexcept;
}  // namespace option_access

}  // namespace lpx::core
