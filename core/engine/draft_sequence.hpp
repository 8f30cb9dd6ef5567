// One sequence's state in a speculative draft model (draft_model.hpp), carried by its Request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/kv_cache.hpp"

namespace lpx::core {

struct DraftSequence {
  BlockTable blocks;              // in the draft model's cache; sized at intake, filled as it grows
  std::vector<std::int32_t> fed;  // the token whose K/V each position of `blocks` holds
  std::size_t confirmed = 0;      // fed[0..confirmed) are known to equal the sequence's text
};

}  // namespace lpx::core
