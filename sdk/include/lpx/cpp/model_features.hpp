// lpx_model_feature bits (lpx/kinds/transformer.h) as words, for the messages that refuse a model:
// "q/k norms, sliding-window attention". Header-only; shared by the core and backend plugins.
#pragma once

#include <cstdint>
#include <string>

#include "lpx/kinds/transformer.h"

namespace lpx {

// The names of the bits set in `bits`, comma-separated; a bit this SDK does not name is
// "feature bit N".
inline std::string model_feature_names(std::uint64_t bits) {
  std::string out;
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1) {
    if ((bits & bit) == 0) continue;
    const char* name = lpx_model_feature_name(bit);
    out += (out.empty() ? "" : ", ") +
           (name != nullptr ? std::string(name) : "feature bit " + std::to_string(bit));
  }
  return out;
}

}  // namespace lpx
