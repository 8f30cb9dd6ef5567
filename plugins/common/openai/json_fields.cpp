#include "json_fields.hpp"

#include <cmath>

#include "api_error.hpp"
#include "lpx/cpp/utf8.hpp"

namespace lpx::openai {

boost::json::object parse_json_object(std::string_view body) {
  boost::json::parse_options options;
  options.max_depth = 64;  // bounded nesting: a hostile body cannot exhaust the stack
  boost::system::error_code ec;
  boost::json::value value = boost::json::parse(body, ec, {}, options);
  if (ec) {
    // Say which of the two went wrong, and nothing more.
    throw bad_request(utf8::is_well_formed(body) ? "the request body is not valid JSON"
                                                 : "the request body is not valid UTF-8");
  }
  if (!value.is_object()) throw bad_request("the request body must be a JSON object");
  return std::move(value.as_object());
}

void field_error(const char* name, const std::string& what) {
  throw bad_request("'" + std::string(name) + "' must be " + what, name);
}

const boost::json::value* JsonFields::find(const char* name) const {
  const boost::json::value* v = object_.if_contains(name);
  return v == nullptr || v->is_null() ? nullptr : v;
}

std::optional<double> JsonFields::number(const char* name, double min, double max) const {
  const boost::json::value* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) field_error(name, "a number");
  const double d = v->to_number<double>();
  if (!std::isfinite(d) || d < min || d > max) {
    field_error(name, "between " + boost::json::serialize(boost::json::value(min)) + " and " +
                          boost::json::serialize(boost::json::value(max)));
  }
  return d;
}

std::optional<std::int64_t> JsonFields::integer(const char* name, std::int64_t min,
                                                std::int64_t max) const {
  const boost::json::value* v = find(name);
  if (v == nullptr) return std::nullopt;
  const std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (v->is_uint64() && v->get_uint64() > static_cast<std::uint64_t>(INT64_MAX)) {
    field_error(name, range);
  }
  std::int64_t i = 0;
  if (v->is_int64()) {
    i = v->get_int64();
  } else if (v->is_uint64()) {
    i = static_cast<std::int64_t>(v->get_uint64());
  } else if (v->is_double() && std::trunc(v->get_double()) == v->get_double() &&
             std::fabs(v->get_double()) < 9.0e15) {
    i = static_cast<std::int64_t>(v->get_double());  // 5.0 is 5, as JSON numbers go
  } else {
    field_error(name, v->is_number() ? range : "an integer");
  }
  if (i < min || i > max) field_error(name, range);
  return i;
}

std::optional<bool> JsonFields::boolean(const char* name) const {
  const boost::json::value* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_bool()) field_error(name, "true or false");
  return v->get_bool();
}

std::optional<std::string> JsonFields::string(const char* name) const {
  const boost::json::value* v = find(name);
  if (v == nullptr) return std::nullopt;
  if (!v->is_string()) field_error(name, "a string");
  return std::string(v->get_string());
}

}  // namespace lpx::openai
