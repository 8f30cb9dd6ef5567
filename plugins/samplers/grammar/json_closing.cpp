#include "json_closing.hpp"

namespace lpx::grammar {

void JsonClosing::Scan::step(char c) {
  if (in_string) {
    if (escaped) {
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else if (c == '"') {
      in_string = false;
    }
    return;
  }
  switch (c) {
    case '"':
      in_string = true;
      needs_value = false;
      break;
    case '{':
    case '[':
      ++depth;
      needs_value = false;
      break;
    case '}':
    case ']':
      if (depth > 0) --depth;
      needs_value = false;
      break;
    case ':':
    case ',':
      needs_value = true;
      break;
    case ' ': case '\n': case '\t': case '\r':
      break;
    default:  // a number, true, false, null
      needs_value = false;
  }
}

void JsonClosing::feed(std::string_view bytes) {
  Scan scan{depth_, in_string_, escaped_, needs_value_};
  for (const char c : bytes) scan.step(c);
  depth_ = scan.depth;
  in_string_ = scan.in_string;
  escaped_ = scan.escaped;
  needs_value_ = scan.needs_value;
}

std::uint32_t JsonClosing::tokens_to_close_after(std::string_view bytes) const {
  Scan scan{depth_, in_string_, escaped_, needs_value_};
  for (const char c : bytes) scan.step(c);
  return count(scan.depth, scan.in_string, scan.needs_value);
}

void JsonClosing::reset() {
  depth_ = 0;
  in_string_ = escaped_ = needs_value_ = false;
}

}  // namespace lpx::grammar
