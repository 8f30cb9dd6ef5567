// The table of every filter, looked up while parsing.
#include "chat_template/filters.hpp"

#include <array>
#include <unordered_map>

#include "chat_template/filter_library.hpp"

namespace lpx::core::jinja {
namespace {

const std::unordered_map<std::string_view, FilterFunction>& filters() {
  namespace seq = sequence_filters;
  namespace text = text_filters;
  namespace number = number_filters;
  static const std::unordered_map<std::string_view, FilterFunction> table{
      {"abs", number::abs_value},
      {"attr", seq::attr},
      {"batch", seq::batch},
      {"capitalize", text::capitalize},
      {"center", text::center},
      {"count", seq::length},
      {"d", text::default_value},
      {"default", text::default_value},
      {"dictsort", seq::dictsort},
      {"e", text::escape},
      {"escape", text::escape},
      {"first", seq::first},
      {"float", number::float_value},
      {"forceescape", text::escape},
      {"format", text::format},
      {"indent", text::indent},
      {"int", number::int_value},
      {"items", seq::items},
      {"join", seq::join},
      {"last", seq::last},
      {"length", seq::length},
      {"list", seq::list},
      {"lower", text::lower},
      {"map", seq::map},
      {"max", seq::max},
      {"min", seq::min},
      {"reject", seq::reject},
      {"rejectattr", seq::rejectattr},
      {"replace", text::replace},
      {"reverse", seq::reverse},
      {"round", number::round_value},
      {"safe", text::safe},
      {"select", seq::select},
      {"selectattr", seq::selectattr},
      {"sort", seq::sort},
      {"string", text::string_value},
      {"sum", seq::sum},
      {"title", text::title},
      {"tojson", text::tojson},
      {"trim", text::trim},
      {"truncate", text::truncate},
      {"unique", seq::unique},
      {"upper", text::upper},
      {"wordcount", text::wordcount},
  };
  return table;
}

}  // namespace

FilterFunction find_filter(std::string_view name) {
  const auto found = filters().find(name);
  return found == filters().end() ? nullptr : found->second;
}

bool is_unsupported_jinja_filter(std::string_view name) {
  static constexpr std::array<std::string_view, 10> kUnsupported{
      "filesizeformat", "groupby",   "pprint", "random",   "slice",
      "striptags",      "urlencode", "urlize", "wordwrap", "xmlattr"};
  for (std::string_view candidate : kUnsupported) {
    if (candidate == name) return true;
  }
  return false;
}

bool filter_needs_context(std::string_view name) {
  return name == "map" || name == "select" || name == "reject" || name == "selectattr" ||
         name == "rejectattr";
}

}  // namespace lpx::core::jinja
