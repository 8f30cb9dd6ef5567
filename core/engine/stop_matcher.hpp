// Finds stop strings in streamed text, across token boundaries. Text goes in piece by piece;
// what comes out is safe to show: it never contains a stop string or a piece of one that might
// still complete. Held-back text is released once it can no longer start a stop string, or by
// finish() when the stream ends for another reason.
//
// Pieces must be whole UTF-8 characters and stop strings valid UTF-8; then every released cut
// falls on a character boundary.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lpx::core {

class StopMatcher {
 public:
  StopMatcher() = default;
  explicit StopMatcher(std::vector<std::string> stops);

  struct Result {
    std::string_view text;   // safe to show now; valid until the next call
    bool stopped = false;    // a stop string was found; `text` is everything before it
  };
  Result push(std::string_view piece);
  // The held-back text, when the stream ends without a stop.
  std::string_view finish();

 private:
  std::vector<std::string> stops_;
  std::string pending_;   // text not yet released
  std::string released_;  // storage for the last result
};

}  // namespace lpx::core
