#include "pipeline/option_schema.hpp"

#include <cmath>
#include <sstream>

namespace lpx::core {
namespace {

bool is_valid_option_name(std::string_view name) {
  if (name.empty() || !(name[0] == '_' || (name[0] >= 'a' && name[0] <= 'z'))) return false;
  for (char c : name) {
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

std::vector<std::string> split_choices(const char* choices) {
  std::vector<std::string> out;
  if (choices == nullptr) return out;
  std::string item;
  for (const char* p = choices;; ++p) {
    if (*p == '|' || *p == '\0') {
      if (!item.empty()) out.push_back(item);
      item.clear();
      if (*p == '\0') break;
    } else {
      item += *p;
    }
  }
  return out;
}

// What a TOML node is, in the words of an error message.
std::string describe_node(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

Expected<double> check_range(double value, const OptionSpec& spec) {
  if (spec.range && (!(value >= spec.range->first) || !(value <= spec.range->second))) {
    return invalid_argument(format_number(value) + " is out of range [" +
                      format_number(spec.range->first) + ", " + format_number(spec.range->second) +
                      "]");
  }
  return value;
}

Expected<std::int64_t> to_int(const toml::node& node, const OptionSpec& spec) {
  const auto* v = node.as_integer();
  if (v == nullptr) return invalid_argument("expected an integer, found " + describe_node(node));
  auto in_range = check_range(static_cast<double>(v->get()), spec);
  if (!in_range) return unexpected(in_range.error());
  return v->get();
}

Expected<OptionValue> convert_scalar(const toml::node& node, const OptionSpec& spec) {
  switch (spec.type) {
    case LPX_OPTION_STRING: {
      const auto* v = node.as_string();
      if (v == nullptr) return invalid_argument("expected a string, found " + describe_node(node));
      if (!spec.choices.empty()) {
        bool allowed = false;
        for (const std::string& c : spec.choices) allowed = allowed || c == v->get();
        if (!allowed) {
          std::string list;
          for (const std::string& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
          return invalid_argument("'" + v->get() + "' is not one of: " + list);
        }
      }
      return OptionValue(v->get());
    }
    case LPX_OPTION_INT: {
      auto v = to_int(node, spec);
      if (!v) return unexpected(v.error());
      return OptionValue(*v);
    }
    case LPX_OPTION_FLOAT: {
      double value = 0;
      if (const auto* f = node.as_floating_point()) {
        value = f->get();
      } else if (const auto* i = node.as_integer()) {
        value = static_cast<double>(i->get());
      } else {
        return invalid_argument("expected a float, found " + describe_node(node));
      }
      if (!std::isfinite(value)) return invalid_argument("expected a finite number");
      auto in_range = check_range(value, spec);
      if (!in_range) return unexpected(in_range.error());
      return OptionValue(value);
    }
    case LPX_OPTION_BOOL: {
      const auto* v = node.as_boolean();
      if (v == nullptr) return invalid_argument("expected a boolean, found " + describe_node(node));
      return OptionValue(v->get());
    }
    default:
      return internal_error(std::string("internal: not a scalar type"));
  }
}

Expected<OptionValue> convert_list(const toml::node& node, const OptionSpec& spec) {
  const auto* array = node.as_array();
  if (array == nullptr) {
    return invalid_argument(std::string("expected ") + type_name(spec.type) + ", found " +
                      describe_node(node));
  }
  OptionSpec item_spec = spec;
  item_spec.type = spec.type == LPX_OPTION_STRING_LIST ? LPX_OPTION_STRING : LPX_OPTION_INT;
  std::vector<std::string> strings;
  std::vector<std::int64_t> ints;
  for (size_t i = 0; i < array->size(); ++i) {
    auto item = convert_scalar(*array->get(i), item_spec);
    if (!item) return unexpected(item.error().with_context("item " + std::to_string(i)));
    if (item_spec.type == LPX_OPTION_STRING) {
      strings.push_back(std::get<std::string>(*item));
    } else {
      ints.push_back(std::get<std::int64_t>(*item));
    }
  }
  if (spec.type == LPX_OPTION_STRING_LIST) return OptionValue(std::move(strings));
  return OptionValue(std::move(ints));
}

}  // namespace

const char* type_name(lpx_option_type type) {
  switch (type) {
    case LPX_OPTION_STRING: return "a string";
    case LPX_OPTION_INT: return "an integer";
    case LPX_OPTION_FLOAT: return "a float";
    case LPX_OPTION_BOOL: return "a boolean";
    case LPX_OPTION_STRING_LIST: return "a list of strings";
    case LPX_OPTION_INT_LIST: return "a list of integers";
  }
  return "an unknown type";
}

Expected<OptionValue> convert_option(const toml::node& node, const OptionSpec& spec) {
  if (spec.type == LPX_OPTION_STRING_LIST || spec.type == LPX_OPTION_INT_LIST) {
    return convert_list(node, spec);
  }
  return convert_scalar(node, spec);
}

Expected<OptionSpec> option_spec_from_c(const lpx_option_spec& c) {
  if (c.name == nullptr || !is_valid_option_name(c.name)) {
    return invalid_argument(std::string("option name '") + (c.name ? c.name : "(null)") +
                      "' is not [a-z_][a-z0-9_]*");
  }
  OptionSpec spec;
  spec.name = c.name;
  if (c.type < LPX_OPTION_STRING || c.type > LPX_OPTION_INT_LIST) {
    return invalid_argument("option '" + spec.name + "' has unknown type " + std::to_string(c.type));
  }
  spec.type = static_cast<lpx_option_type>(c.type);
  spec.required = (c.flags & LPX_OPTION_REQUIRED) != 0;
  spec.description = c.description ? c.description : "";
  if ((c.flags & LPX_OPTION_HAS_RANGE) != 0) {
    if (!(c.min <= c.max)) return invalid_argument("option '" + spec.name + "' has an empty range");
    spec.range = std::make_pair(c.min, c.max);
  }
  spec.choices = split_choices(c.choices);
  if (c.default_value != nullptr) {
    if (spec.required) {
      return invalid_argument("option '" + spec.name + "' is required and also has a default");
    }
    toml::table parsed;
    try {
      parsed = toml::parse(std::string("value = ") + c.default_value);
    } catch (const toml::parse_error&) {
      return invalid_argument("option '" + spec.name + "' has default '" + c.default_value +
                        "', which is not a TOML value");
    }
    auto value = convert_option(*parsed.get("value"), spec);
    if (!value) {
      return unexpected(value.error().prefixed("option '" + spec.name + "' has an invalid default: "));
    }
    spec.default_value = std::move(*value);
  }
  return spec;
}

std::string to_toml_text(const OptionValue& value) {
  struct Printer {
    std::string operator()(const std::string& s) const {
      std::ostringstream out;
      out << toml::value<std::string>(s);
      return out.str();
    }
    std::string operator()(std::int64_t v) const { return std::to_string(v); }
    std::string operator()(double v) const { return format_number(v); }
    std::string operator()(bool v) const { return v ? "true" : "false"; }
    std::string operator()(const std::vector<std::string>& items) const {
      std::string out = "[";
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + (*this)(items[i]);
      return out + "]";
    }
    std::string operator()(const std::vector<std::int64_t>& items) const {
      std::string out = "[";
      for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + std::to_string(items[i]);
      return out + "]";
    }
  };
  return std::visit(Printer{}, value);
}

}  // namespace lpx::core
