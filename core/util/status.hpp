// An error as the core passes it around: the lpx_status_code that says what kind of failure it
// is, a message with its context, and the request field it is about when there is one. Kept
// from where a failure is found to where it is answered, so the C API returns the code, and an
// HTTP or batch answer maps it to a status and names the field, without reading the message.
//
// Made where the failure is found, by what it is:
//   return invalid_argument("max_tokens must be positive", "max_tokens");
//   return not_found(path + ": no such file");
// and passed up with the caller's context in front, keeping code and field:
//   if (!file) return unexpected(file.error().with_context(path));   // "path: ..."
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <tl/expected.hpp>

#include "lpx/status.h"

namespace lpx::core {

struct [[nodiscard]] Status {
  lpx_status_code code = LPX_ERR_INTERNAL;
  std::string message;
  std::string field;  // e.g. "max_tokens", "logit_bias", "stop", "session"; empty: none

  Status() = default;
  Status(lpx_status_code c, std::string m, std::string f = {})
      : code(c), message(std::move(m)), field(std::move(f)) {}

  // The same failure, its message prefixed with "context: ".
  Status with_context(std::string_view context) const& { return prefixed(std::string(context) + ": "); }
  Status with_context(std::string_view context) && {
    return std::move(*this).prefixed(std::string(context) + ": ");
  }

  // The same failure, about request field `f` (which replaces any field it named).
  Status about(std::string f) && {
    field = std::move(f);
    return std::move(*this);
  }

  // The same failure, its message prefixed with `prefix` as it is ("[model] ").
  Status prefixed(std::string_view prefix) const& {
    return Status(code, std::string(prefix) + message, field);
  }
  Status prefixed(std::string_view prefix) && {
    message.insert(0, prefix);
    return std::move(*this);
  }
};

// The message, for logs and test output.
inline std::ostream& operator<<(std::ostream& out, const Status& status) {
  return out << status.message;
}

// A failure of the given kind, ready to return from a function returning Expected<T>.
[[nodiscard]] inline tl::unexpected<Status> fail(lpx_status_code code, std::string message,
                                                 std::string field = {}) {
  return tl::unexpected<Status>(Status(code, std::move(message), std::move(field)));
}

// The caller passed something wrong: an option, a request field, a malformed file.
[[nodiscard]] inline tl::unexpected<Status> invalid_argument(std::string message, std::string field = {}) {
  return fail(LPX_ERR_INVALID_ARGUMENT, std::move(message), std::move(field));
}
// A named thing (file, plugin, option, session) does not exist.
[[nodiscard]] inline tl::unexpected<Status> not_found(std::string message, std::string field = {}) {
  return fail(LPX_ERR_NOT_FOUND, std::move(message), std::move(field));
}
// A valid request this build or backend cannot serve (an architecture, a type, a device).
[[nodiscard]] inline tl::unexpected<Status> unsupported(std::string message, std::string field = {}) {
  return fail(LPX_ERR_UNSUPPORTED, std::move(message), std::move(field));
}
// Reading or writing a file or socket failed.
[[nodiscard]] inline tl::unexpected<Status> io_error(std::string message) {
  return fail(LPX_ERR_IO, std::move(message));
}
// A configured limit (context, queue, memory pool) was reached.
[[nodiscard]] inline tl::unexpected<Status> resource_exhausted(std::string message, std::string field = {}) {
  return fail(LPX_ERR_RESOURCE_EXHAUSTED, std::move(message), std::move(field));
}
// Cannot serve now, may later (shutting down, no device yet).
[[nodiscard]] inline tl::unexpected<Status> unavailable(std::string message) {
  return fail(LPX_ERR_UNAVAILABLE, std::move(message));
}
// A bug: an invariant broke.
[[nodiscard]] inline tl::unexpected<Status> internal_error(std::string message) {
  return fail(LPX_ERR_INTERNAL, std::move(message));
}

}  // namespace lpx::core
