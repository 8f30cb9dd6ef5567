// Typed option values and the schema they are checked against (plugin options and the core's own
// sections alike).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <toml++/toml.h>

#include "lpx/options.h"
#include "util/expected.hpp"

namespace lpx::core {

using OptionValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>,
                                 std::vector<std::int64_t>>;

struct OptionSpec {
  std::string name;
  lpx_option_type type = LPX_OPTION_STRING;
  bool required = false;
  std::optional<OptionValue> default_value;
  std::string description;
  std::optional<std::pair<double, double>> range;  // inclusive
  std::vector<std::string> choices;                // strings only; empty = any
};

// "string", "integer", "float", "boolean", "list of strings", "list of integers".
const char* type_name(lpx_option_type type);

// A C spec from a plugin, copied and checked (known type, parseable default, name syntax).
Expected<OptionSpec> option_spec_from_c(const lpx_option_spec& spec);

// The value of `node` as `spec` requires, or a message saying why not ("expected an integer,
// found a string", "9 is out of range [0, 2]", "'fast' is not one of: a, b").
Expected<OptionValue> convert_option(const toml::node& node, const OptionSpec& spec);

// The TOML text of `value`, for listings and logs.
std::string to_toml_text(const OptionValue& value);

}  // namespace lpx::core
