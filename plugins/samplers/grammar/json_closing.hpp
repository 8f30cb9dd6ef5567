// How far a JSON text is from closed: a running scan of the bytes generated so far that counts
// the tokens still needed at the least to end it (each open string, array and object needs its
// close; a pending ':' or ',' needs a value first). The grammar link uses it when max_tokens is
// near, to prefer tokens that bring the end closer, so that an answer that can still be
// finished is finished instead of cut off.
#pragma once

#include <cstdint>
#include <string_view>

namespace lpx::grammar {

class JsonClosing {
 public:
  void feed(std::string_view bytes);
  void reset();
  // A lower bound on the tokens that must follow before the text is whole JSON.
  std::uint32_t tokens_to_close() const { return count(depth_, in_string_, needs_value_); }
  // The same once `bytes` are appended, without appending them (no allocation: it runs for
  // every allowed token of a step).
  std::uint32_t tokens_to_close_after(std::string_view bytes) const;

 private:
  struct Scan {
    std::uint32_t depth;
    bool in_string, escaped, needs_value;
    void step(char c);
  };
  static std::uint32_t count(std::uint32_t depth, bool in_string, bool needs_value) {
    return depth + (in_string ? 1u : 0u) + (needs_value ? 1u : 0u);
  }
  std::uint32_t depth_ = 0;  // objects and arrays not yet closed
  bool in_string_ = false;
  bool escaped_ = false;
  bool needs_value_ = false;  // after ':' or ','
};

}  // namespace lpx::grammar
