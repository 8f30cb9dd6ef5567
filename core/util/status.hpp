// An error as the core passes it around: the lpx_status_code that says what kind of failure it
// is, a message with its context, and the request field it is about when there is one. Kept
// from the refusal to the transport, so an HTTP or batch answer maps the code to its status and
// names the field without reading the message.
#pragma once

#include <ostream>
#include <string>
#include <utility>

#include "lpx/status.h"

namespace lpx::core {

struct [[nodiscard]] Status {
  lpx_status_code code = LPX_ERR_INTERNAL;
  std::string message;
  std::string field;  // e.g. "max_tokens", "logit_bias", "stop", "session"; empty: none

  Status() = default;
  Status(lpx_status_code c, std::string m, std::string f = {})
      : code(c), message(std::move(m)), field(std::move(f)) {}
};

// The message, for logs and test output.
inline std::ostream& operator<<(std::ostream& out, const Status& status) {
  return out << status.message;
}

}  // namespace lpx::core
