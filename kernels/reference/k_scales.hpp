// The packed 6-bit scales and mins of the Q4_K / Q5_K super-block (12 bytes at offset 4): one
// definition for every kernel that reads them. Internal to the kernels.
#pragma once

#include <cstdint>

namespace lpx::kernels::reference {

struct KScaleAndMin {
  int scale;
  int min;
};

// Sub-block s (0..7). Bytes 0-3 hold the scales of sub-blocks 0-3 in their low 6 bits, bytes 4-7
// the mins; sub-blocks 4-7 take their low 4 bits from bytes 8-11 (scale low nibble, min high
// nibble) and their top 2 bits from the spare top bits of bytes 0-3 (scales) and 4-7 (mins).
constexpr KScaleAndMin k_scale_and_min(const std::uint8_t* scales, int s) noexcept {
  if (s < 4) return {scales[s] & 0x3F, scales[s + 4] & 0x3F};
  const int low = scales[s + 4];
  return {(low & 0x0F) | ((scales[s - 4] >> 6) << 4), (low >> 4) | ((scales[s] >> 6) << 4)};
}

}  // namespace lpx::kernels::reference
