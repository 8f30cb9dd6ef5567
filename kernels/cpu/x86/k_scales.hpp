// The eight 6-bit scales and eight 6-bit mins of a Q4_K / Q5_K super-block, unpacked with a few
// 32-bit operations (the packing: reference/k_scales.hpp). Internal to kernels/cpu/x86.
#pragma once

#include <cstdint>
#include <cstring>

namespace lpx::kernels::LPX_X86_ISA {

struct KScalesAndMins {
  std::uint8_t sc[8];
  std::uint8_t mn[8];
};

// `packed`: the 12 scale bytes (offset 4 of the block).
inline KScalesAndMins unpack_k_scales(const std::uint8_t* packed) noexcept {
  std::uint32_t s[3];
  std::memcpy(s, packed, 12);
  const std::uint32_t scales[2] = {s[0] & 0x3F3F3F3Fu, (s[2] & 0x0F0F0F0Fu) | (((s[0] >> 6) & 0x03030303u) << 4)};
  const std::uint32_t mins[2] = {s[1] & 0x3F3F3F3Fu, ((s[2] >> 4) & 0x0F0F0F0Fu) | (((s[1] >> 6) & 0x03030303u) << 4)};
  KScalesAndMins out;
  std::memcpy(out.sc, scales, 8);
  std::memcpy(out.mn, mins, 8);
  return out;
}

}  // namespace lpx::kernels::LPX_X86_ISA
